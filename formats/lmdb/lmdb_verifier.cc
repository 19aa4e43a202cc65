#include "formats/lmdb/lmdb_verifier.h"

#include <functional>

#include "formats/lmdb/lmdb_environment.h"
#include "formats/lmdb/lmdb_format.h"
#include "ground/checksum.h"
#include "ground/sample_keys.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

// Calls `visit(key, value)` for every entry in key order, the metadata record included.
Status VisitRecords(const std::string& dir, const std::function<Status(std::string_view, std::string_view)>& visit) {
  std::unique_ptr<LmdbEnvironment> lmdb;
  SHARDPACK_RETURN_IF_ERROR(LmdbEnvironment::Open(dir, /*read_only=*/true, kLmdbInitialMapSize, &lmdb));
  return lmdb->Read([&](MDB_txn* txn, MDB_dbi dbi) -> Status {
    MDB_cursor* cursor = nullptr;
    int rc = mdb_cursor_open(txn, dbi, &cursor);
    if (rc != 0) return LmdbError("cannot open LMDB cursor in " + dir, rc);
    MDB_val k, v;
    Status s;
    for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0 && s.ok();
         rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
      s = visit(std::string_view(static_cast<const char*>(k.mv_data), k.mv_size),
                std::string_view(static_cast<const char*>(v.mv_data), v.mv_size));
    }
    mdb_cursor_close(cursor);
    if (s.ok() && rc != MDB_NOTFOUND) s = LmdbError("cannot read LMDB records in " + dir, rc);
    return s;
  });
}

}  // namespace

void VerifyLmdbDataset(Env* env, const std::string& dir, const Manifest& manifest, const ShardEntry& entry,
                       const VerifyOptions& options, ShardCheck* check) {
  auto problem = [&](const std::string& key, const std::string& what) { check->AddProblem(entry.file, key, what); };
  uint64_t checksum = 0, size = 0;
  Status s = ChecksumFile(env, JoinPath(dir, entry.file), &checksum, &size);
  if (!s.ok()) {
    problem("", s.message());
    return;
  }
  check->bytes = size;
  if (size != entry.bytes) {
    problem("", "file is " + std::to_string(size) + " bytes, manifest says " + std::to_string(entry.bytes) +
                    (size < entry.bytes ? " (truncated)" : ""));
  }
  if (ChecksumHex(checksum) != entry.xxh64) {
    problem("", "checksum mismatch: xxh64 " + ChecksumHex(checksum) + ", manifest says " + entry.xxh64);
  }
  if (!check->problems.empty()) {
    problem("", "records not read: LMDB cannot safely open a damaged environment");
    return;
  }
  bool have_metadata = false;
  s = VisitRecords(dir, [&](std::string_view key, std::string_view value) {
    if (key == kLmdbMetadataKey) {
      have_metadata = true;
      nlohmann::json meta = nlohmann::json::parse(value, nullptr, false);
      if (meta.is_discarded() || !meta.contains("samples") || meta["samples"] != entry.samples) {
        problem("", "metadata record is malformed or disagrees with the manifest");
      }
      return Status::OK();
    }
    const std::string expected = IndexKey(check->samples);
    if (key != expected) problem(std::string(key), "unexpected key; expected " + expected);
    ++check->samples;
    LmdbSample sample;
    Status r = ParseLmdbSample(value, key, &sample);
    if (!r.ok()) {
      problem(std::string(key), r.message());
      return Status::OK();
    }
    const std::string_view image = sample.image;
    for (const LmdbField& f : sample.fields) {
      if (ChecksumHex(Xxh64(f.data)) != f.xxh64) {
        problem(std::string(key), "checksum mismatch: the bytes of its field " + f.name + " changed");
      }
    }
    if (ChecksumHex(Xxh64(image)) != sample.xxh64) {
      problem(std::string(key), "checksum mismatch: image bytes of this sample changed");
    }
    if (options.decode) {
      DecodedImage decoded;
      r = DecodeImage(image, options.max_pixels, &decoded);
      if (r.ok())
        ++check->images_decoded;
      else
        problem(std::string(key), "cannot decode image: " + r.message());
      const std::string over = r.ok() ? ResolutionBoundProblem(manifest, image, decoded) : "";
      if (!over.empty()) problem(std::string(key), over);
    }
    return Status::OK();
  });
  if (!s.ok()) problem("", s.message());
  if (!have_metadata) problem("", "metadata record " + std::string(kLmdbMetadataKey) + " is missing");
}

Status ReadLmdbSampleRecords(const std::string& dir, std::vector<SampleRecord>* records) {
  records->clear();
  return VisitRecords(dir, [&](std::string_view key, std::string_view value) {
    if (key == kLmdbMetadataKey) return Status::OK();
    LmdbSample sample;
    SHARDPACK_RETURN_IF_ERROR(ParseLmdbSample(value, key, &sample));
    SampleRecord r;
    r.key = std::move(sample.key);
    r.size = value.size();
    (void)ParseChecksumHex(sample.xxh64, &r.xxh64);
    r.label = sample.label;
    r.format = sample.format;
    r.width = sample.width;
    r.height = sample.height;
    r.original_width = sample.original_width;
    r.original_height = sample.original_height;
    r.orientation = uint8_t(sample.orientation);
    records->push_back(std::move(r));
    return Status::OK();
  });
}

}  // namespace shardpack
