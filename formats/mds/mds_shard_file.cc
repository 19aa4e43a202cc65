#include "formats/mds/mds_shard_file.h"

#include <xxhash.h>
#include <zstd.h>

#include <cstdio>

#include "formats/mds/litdata_framed.h"

namespace shardpack {
namespace {

std::string Hex(uint64_t v, int digits) {
  char text[17];
  std::snprintf(text, sizeof(text), "%0*llx", digits, static_cast<unsigned long long>(v));
  return text;
}

// What Python's xxhash.<algo>(data).hexdigest() gives; empty for an algorithm shardpack lacks.
std::string Digest(const std::string& algo, std::string_view data) {
  if (algo == "xxh64") return Hex(XXH64(data.data(), data.size(), 0), 16);
  if (algo == "xxh32") return Hex(XXH32(data.data(), data.size(), 0), 8);
  if (algo == "xxh3_64") return Hex(XXH3_64bits(data.data(), data.size()), 16);
  if (algo == "xxh128" || algo == "xxh3_128") {
    const XXH128_hash_t h = XXH3_128bits(data.data(), data.size());
    return Hex(h.high64, 16) + Hex(h.low64, 16);
  }
  return "";
}

}  // namespace

Status ReadMdsStoredShard(Env* env, const std::string& dir, const MdsShardInfo& shard, std::string* stored) {
  const MdsFile& file = shard.stored();
  const std::string path = JoinPath(dir, file.basename);
  uint64_t size = 0;
  SHARDPACK_RETURN_IF_ERROR(env->GetFileSize(path, &size));
  if (!file.size_known) return env->ReadFile(path, kMaxMdsShardBytes, stored);
  if (size == file.bytes) SHARDPACK_RETURN_IF_ERROR(env->ReadFile(path, file.bytes, stored));
  if (size != file.bytes || stored->size() != file.bytes) {
    if (size == file.bytes) size = stored->size();  // it changed while being read
    return Status::DataLoss(path + " is " + std::to_string(size) + " bytes, index.json says " +
                            std::to_string(file.bytes) + (size < file.bytes ? " (cut short)" : ""));
  }
  return Status::OK();
}

Status DecompressMdsShard(const std::string& path, const MdsShardInfo& shard, std::string_view stored,
                          std::string* raw) {
  if (shard.codec == MdsCodec::kNone) return Status::InvalidArgument(path + " is not a compressed shard");
  if (shard.codec == MdsCodec::kLitDataFramedZstd) return UnframeLitDataChunk(stored, shard.samples, path, raw);
  const uint64_t size = shard.raw.bytes;
  raw->resize(size);
  // One call into a buffer of exactly the size index.json gives: more data than that fails here
  // (dstSize_tooSmall), less is caught below, and nothing is allocated from the file's own claims.
  const size_t n = ZSTD_decompress(raw->data(), raw->size(), stored.data(), stored.size());
  if (ZSTD_isError(n)) {
    raw->clear();
    return Status::DataLoss(path + ": its zstd data does not decompress to the " + std::to_string(size) +
                            " bytes expected (zstd: " + ZSTD_getErrorName(n) + ")");
  }
  if (n != size) {
    raw->clear();
    return Status::DataLoss(path + ": decompresses to " + std::to_string(n) + " bytes, " + std::to_string(size) +
                            " expected");
  }
  return Status::OK();
}

Status ReadMdsShard(Env* env, const std::string& dir, const MdsShardInfo& shard, std::string* raw) {
  if (!shard.compressed) return ReadMdsStoredShard(env, dir, shard, raw);
  std::string stored;
  SHARDPACK_RETURN_IF_ERROR(ReadMdsStoredShard(env, dir, shard, &stored));
  return DecompressMdsShard(JoinPath(dir, shard.zip.basename), shard, stored, raw);
}

Status LoadMdsShard(Env* env, const std::string& dir, const MdsShardInfo& shard, WholeFile* file) {
  if (shard.compressed) {
    std::string raw;
    SHARDPACK_RETURN_IF_ERROR(ReadMdsShard(env, dir, shard, &raw));
    file->Own(std::move(raw));
    return Status::OK();
  }
  const std::string path = JoinPath(dir, shard.raw.basename);
  SHARDPACK_RETURN_IF_ERROR(file->Map(env, path, kMaxMdsShardBytes));
  const uint64_t size = file->bytes().size();
  if (size != shard.raw.bytes) {
    file->Clear();
    return Status::DataLoss(path + " is " + std::to_string(size) + " bytes, index.json says " +
                            std::to_string(shard.raw.bytes) + (size < shard.raw.bytes ? " (cut short)" : ""));
  }
  return Status::OK();
}

void CheckMdsHashes(const MdsFile& file, std::string_view data, std::vector<std::string>* problems,
                    std::vector<std::string>* unchecked) {
  for (const auto& [algo, expected] : file.hashes) {
    const std::string actual = Digest(algo, data);
    if (actual.empty()) {
      unchecked->push_back(algo);
    } else if (actual != expected) {
      problems->push_back("checksum mismatch: " + algo + " of " + file.basename + " is " + actual +
                          ", index.json says " + expected);
    }
  }
}

}  // namespace shardpack
