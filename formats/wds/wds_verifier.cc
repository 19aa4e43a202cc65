#include "formats/wds/wds_verifier.h"

#include <algorithm>
#include <set>

#include "formats/wds/dali_index.h"
#include "formats/wds/tar_format.h"
#include "formats/wds/tar_shard_reader.h"
#include "formats/wds/wds_naming.h"
#include "ground/checksum.h"
#include "ground/range_checksums.h"
#include "ground/sample_table.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

class ShardChecker {
 public:
  ShardChecker(Env* env, const std::string& dir, const Manifest& manifest, const ShardEntry& shard,
               const VerifyOptions& options, ShardCheck* check)
      : env_(env), dir_(dir), manifest_(manifest), shard_(shard), options_(options), check_(check) {}

  void Run() {
    const std::string path = JoinPath(dir_, shard_.file);
    auto problem = [&](const std::string& key, const std::string& what) { Problem(key, what); };
    if (!CheckShardFileSize(env_, path, shard_.bytes, problem)) return;
    have_index_ = LoadSideFile(shard_.index, [&](const std::string& text) { return ParseDaliIndex(text, &index_); });
    have_table_ =
        LoadSideFile(shard_.sample_table, [&](const std::string& text) { return ParseSampleTable(text, &table_); });
    if (have_index_ && index_.size() != shard_.samples) {
      Problem("", "DALI index lists " + std::to_string(index_.size()) + " samples, manifest says " +
                      std::to_string(shard_.samples));
    }
    if (have_table_ && table_.size() != shard_.samples) {
      Problem("", "sample table lists " + std::to_string(table_.size()) + " samples, manifest says " +
                      std::to_string(shard_.samples));
    }
    CheckChecksums(path);
    CheckTarStructure(path);
    if (check_->samples != shard_.samples) {
      Problem("", "tar holds " + std::to_string(check_->samples) + " samples, manifest says " +
                      std::to_string(shard_.samples));
    }
  }

 private:
  void Problem(const std::string& key, const std::string& what) { check_->AddProblem(shard_.file, key, what); }

  template <typename Parse>
  bool LoadSideFile(const SideFile& side, Parse parse) {
    std::string text;
    if (!LoadSideFileForCheck(env_, dir_, shard_.file, side, options_.max_member_bytes, check_, &text)) return false;
    const Status s = parse(text);
    if (!s.ok()) {
      Problem("", side.file + ": " + s.message());
      return false;
    }
    return true;
  }

  void CheckChecksums(const std::string& path) {
    CheckShardChecksums(
        env_, path, shard_.xxh64, table_, [&](const std::string& key, const std::string& what) { Problem(key, what); },
        &check_->bytes);
  }

  // Walks the tar with libarchive and checks members against the DALI index, the grouping of
  // members into adjacent samples, and (with decode) every image.
  void CheckTarStructure(const std::string& path) {
    std::unique_ptr<TarShardReader> reader;
    Status s = TarShardReader::Open(env_, path, &reader);
    if (!s.ok()) {
      Problem("", s.message());
      return;
    }
    std::set<std::string> finished_keys;
    std::string current_key;
    size_t member_in_sample = 0;
    for (;;) {
      TarMember m;
      bool done = false;
      s = reader->Next(&m, &done);
      if (!s.ok()) {
        Problem(current_key, "tar structure: " + s.message());
        return;
      }
      if (done) break;
      std::string key, ext;
      if (!m.regular || !SplitWdsMemberName(m.name, &key, &ext)) {
        Problem("", "unexpected tar member '" + m.name + "'");
        continue;
      }
      if (key != current_key) {
        if (!current_key.empty()) finished_keys.insert(current_key);
        if (finished_keys.count(key)) Problem(key, "members of this sample are not adjacent");
        current_key = key;
        member_in_sample = 0;
        ++check_->samples;
      }
      CheckAgainstIndex(check_->samples - 1, member_in_sample++, m, key);
      if (options_.decode && ImageFormatFromExtension(ext) != ImageFormat::kUnknown) {
        // The sample's image (its extension one word; "seg.png" is a field) is also held to the
        // size its sample table records, which buckets, --where and stat trust without decoding.
        const SampleRecord* recorded =
            have_table_ && ext.find('.') == std::string::npos && check_->samples - 1 < table_.size()
                ? &table_[check_->samples - 1]
                : nullptr;
        DecodeMember(reader.get(), key, m, recorded);
      }
    }
    if (!current_key.empty() && have_table_ && check_->samples <= table_.size() &&
        table_[check_->samples - 1].key != current_key) {
      Problem(current_key, "sample table and tar disagree on the last sample's key");
    }
  }

  void CheckAgainstIndex(uint64_t sample, size_t member, const TarMember& m, const std::string& key) {
    if (have_table_ && sample < table_.size() && member == 0 && table_[sample].key != key) {
      Problem(key, "sample table lists key '" + table_[sample].key + "' at this position");
    }
    if (!have_index_) return;
    if (sample >= index_.size() || member >= index_[sample].size()) {
      Problem(key, "tar member '" + m.name + "' is not in the DALI index");
      return;
    }
    const DaliIndexMember& e = index_[sample][member];
    const uint64_t data_offset = m.header_offset + tar::kBlockSize;
    if (e.name != m.name || e.size != m.size || e.offset != data_offset) {
      Problem(key, "DALI index entry (" + e.name + " at " + std::to_string(e.offset) + ", " + std::to_string(e.size) +
                       " bytes) does not match the tar member (" + m.name + " at " + std::to_string(data_offset) +
                       ", " + std::to_string(m.size) + " bytes)");
    }
  }

  void DecodeMember(TarShardReader* reader, const std::string& key, const TarMember& m, const SampleRecord* recorded) {
    std::string data;
    Status s = reader->ReadData(options_.max_member_bytes, &data);
    if (s.ok()) {
      DecodedImage image;
      s = DecodeImage(data, options_.max_pixels, &image);
      if (s.ok()) ++check_->images_decoded;
      if (s.ok() && recorded != nullptr && (recorded->width != image.width || recorded->height != image.height)) {
        Problem(key, m.name + " is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                         " pixels; the sample table records " + std::to_string(recorded->width) + "x" +
                         std::to_string(recorded->height));
      }
      const std::string over = s.ok() ? ResolutionBoundProblem(manifest_, data, image) : "";
      if (!over.empty()) Problem(key, m.name + ": " + over);
    }
    if (!s.ok()) Problem(key, "cannot decode " + m.name + ": " + s.message());
  }

  Env* env_;
  const std::string& dir_;
  const Manifest& manifest_;  // its options record a resolution bound, which --decode checks
  const ShardEntry& shard_;
  const VerifyOptions& options_;
  ShardCheck* check_;
  bool have_index_ = false;
  bool have_table_ = false;
  std::vector<DaliIndexSample> index_;
  std::vector<SampleRecord> table_;
};

}  // namespace

void VerifyWdsShard(Env* env, const std::string& dir, const Manifest& manifest, const ShardEntry& shard,
                    const VerifyOptions& options, ShardCheck* check) {
  ShardChecker(env, dir, manifest, shard, options, check).Run();
}

}  // namespace shardpack
