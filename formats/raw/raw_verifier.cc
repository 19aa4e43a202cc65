#include "formats/raw/raw_verifier.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "formats/common/format.h"
#include "formats/raw/raw_format.h"
#include "ground/checksum.h"
#include "ground/range_checksums.h"
#include "ground/sample_keys.h"
#include "ground/sample_table.h"

namespace shardpack {
namespace {

class RawShardChecker {
 public:
  RawShardChecker(Env* env, const std::string& dir, const ShardEntry& shard, const nlohmann::json& options,
                  ShardCheck* check)
      : env_(env), dir_(dir), shard_(shard), options_(options), check_(check) {}

  void Run() {
    const std::string path = JoinPath(dir_, shard_.file);
    auto problem = [&](const std::string& key, const std::string& what) { Problem(key, what); };
    if (!CheckShardFileSize(env_, path, shard_.bytes, problem)) return;
    uint64_t size = 0;
    (void)env_->GetFileSize(path, &size);
    std::string text;
    if (Load(shard_.sample_table, &text)) {
      Status s = ParseSampleTable(text, &table_);
      if (!s.ok()) Problem("", shard_.sample_table.file + ": " + s.message());
    }
    if (table_.size() != shard_.samples) {
      Problem("", "sample table lists " + std::to_string(table_.size()) + " samples, manifest says " +
                      std::to_string(shard_.samples));
    }
    const bool compressed = EndsWith(shard_.file, ".zst");
    // Sample-table offsets of a compressed shard refer to the decompressed data: its per-sample
    // checksums are checked chunk by chunk below.
    CheckShardChecksums(env_, path, shard_.xxh64, compressed ? std::vector<SampleRecord>() : table_, problem,
                        &check_->bytes);
    check_->samples = table_.size();
    if (!compressed) CheckPixelHeader(path, size);
    for (const SideFile& side : shard_.side_files) CheckSideFile(side);
    if (compressed) CheckChunks(path);
    for (const auto& [field, count] : shard_.fields) {
      if (!IsImageFieldKind(FieldKind(field))) continue;
      for (const std::string& file :
           {RawMaskFileName(shard_.file, field), RawMaskPresenceFileName(shard_.file, field)}) {
        if (checked_masks_.count(file) == 0) {
          Problem("", "the manifest counts " + std::to_string(count) + " masks " + field + " but lists no " + file);
        }
      }
    }
  }

 private:
  void Problem(const std::string& key, const std::string& what) { check_->AddProblem(shard_.file, key, what); }

  bool Load(const SideFile& side, std::string* text) {
    return LoadSideFileForCheck(env_, dir_, shard_.file, side, uint64_t(1) << 32, check_, text);
  }

  // The first kNpyHeaderBytes of the file at `path` (fewer when it is shorter): a .npy header.
  bool ReadNpyHead(const std::string& path, std::string* head) {
    std::unique_ptr<SequentialFile> f;
    head->assign(kNpyHeaderBytes, '\0');
    size_t n = 0;
    if (!env_->NewSequentialFile(path, &f).ok() || !f->Read(head->size(), head->data(), &n).ok()) return false;
    head->resize(n);
    return true;
  }

  void CheckPixelHeader(const std::string& path, uint64_t file_size) {
    std::string head;
    if (!ReadNpyHead(path, &head)) return;
    NpyInfo info;
    Status s = ParseNpyHeader(head, &info);
    if (!s.ok()) {
      Problem("", s.message());
      return;
    }
    data_offset_ = info.data_offset;
    std::vector<uint64_t> expected;
    if (options_.value("keep_size", false)) {
      expected = {file_size > info.data_offset ? file_size - info.data_offset : 0};
    } else {
      const auto crop = options_.value("crop", std::vector<uint64_t>{0, 0});
      expected = {shard_.samples, crop.size() == 2 ? crop[0] : 0, crop.size() == 2 ? crop[1] : 0, 3};
    }
    if (info.descr != "|u1" || info.fortran_order || info.shape != expected) {
      Problem("", ".npy header does not describe the expected uint8 array");
    }
  }

  // Decompresses every chunk (refusing a frame that claims another size than its samples need) and
  // checks each sample's pixels against its sample-table checksum.
  void CheckChunks(const std::string& path) {
    const uint64_t per_chunk = options_.value("chunk_samples", 0u);
    if (chunk_offsets_.size() < 2 || per_chunk == 0) {
      Problem("", "compressed shard without a chunk index");
      return;
    }
    std::unique_ptr<SequentialFile> f;
    if (!env_->NewSequentialFile(path, &f).ok()) return;
    std::string frame, data;
    uint64_t at = 0;
    for (size_t c = 0; c + 1 < chunk_offsets_.size(); ++c) {
      const uint64_t first = c * per_chunk, last = std::min<uint64_t>(table_.size(), first + per_chunk);
      const std::string key = first < table_.size() ? table_[first].key : "";
      const int64_t from = chunk_offsets_[c], to = chunk_offsets_[c + 1];
      if (from < 0 || to < from || uint64_t(from) != at || to - from > (int64_t(1) << 31)) {
        Problem(key, "chunk index is damaged");
        return;
      }
      frame.resize(static_cast<size_t>(to - from));
      size_t got = 0;
      while (got < frame.size()) {
        size_t n = 0;
        if (!f->Read(frame.size() - got, frame.data() + got, &n).ok() || n == 0) break;
        got += n;
      }
      at = static_cast<uint64_t>(to);
      if (got != frame.size()) {
        Problem(key, "chunk lies past the end of the file (truncated)");
        return;
      }
      uint64_t expected = 0;
      for (uint64_t i = first; i < last; ++i) expected += table_[i].size;
      if (ZSTD_getFrameContentSize(frame.data(), frame.size()) != expected) {
        Problem(key, "chunk " + std::to_string(c) + " does not hold the " + std::to_string(expected) +
                         " bytes its samples need");
        continue;
      }
      data.resize(expected);
      const size_t n = ZSTD_decompress(data.data(), data.size(), frame.data(), frame.size());
      if (ZSTD_isError(n) || n != expected) {
        Problem(key, "chunk " + std::to_string(c) +
                         " does not decompress: " + (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short"));
        continue;
      }
      const uint64_t base = table_[first].offset;
      for (uint64_t i = first; i < last; ++i) {
        const SampleRecord& r = table_[i];
        if (r.offset < base || r.offset - base + r.size > expected ||
            Xxh64(std::string_view(data.data() + (r.offset - base), r.size)) != r.xxh64) {
          Problem(r.key, "checksum mismatch: pixels of this sample changed");
        }
      }
    }
  }

  void CheckSideFile(const SideFile& side) {
    std::string field;
    const RawMaskFile mask = ParseRawMaskFileName(shard_.file, side.file, &field);
    if (mask == RawMaskFile::kArray) {
      CheckMaskArray(side);
      return;
    }
    std::string text;
    if (!Load(side, &text)) return;
    if (EndsWith(side.file, ".keys.txt")) {
      std::istringstream in(text);
      std::string key;
      size_t i = 0;
      for (; std::getline(in, key); ++i) {
        if (i >= table_.size() || table_[i].key != key) {
          Problem(key, side.file + ": key " + std::to_string(i) + " disagrees with the sample table");
          return;
        }
      }
      if (i != table_.size()) Problem("", side.file + ": lists " + std::to_string(i) + " keys");
      return;
    }
    if (EndsWith(side.file, ".fields.jsonl")) {
      CheckFields(side.file, text);
      return;
    }
    if (mask == RawMaskFile::kPresence) {
      CheckMaskPresence(side.file, field, text);
      return;
    }
    NpyInfo info;
    Status s = ParseNpyHeader(text, &info);
    if (!s.ok()) {
      Problem("", side.file + ": " + s.message());
      return;
    }
    const uint64_t n = table_.size();
    auto int_at = [&](uint64_t i, int width) {
      int64_t v = 0;
      for (int b = width - 1; b >= 0; --b)
        v = (v << 8) | static_cast<unsigned char>(text[info.data_offset + i * width + b]);
      return width == 4 ? static_cast<int64_t>(static_cast<int32_t>(v)) : v;
    };
    if (EndsWith(side.file, ".labels.npy")) {
      if (info.descr != "<i4" || info.shape != std::vector<uint64_t>{n} || text.size() != info.data_offset + 4 * n) {
        Problem("", side.file + ": not an int32 array of " + std::to_string(n) + " labels");
        return;
      }
      for (uint64_t i = 0; i < n; ++i) {
        if (int_at(i, 4) != table_[i].label)
          Problem(table_[i].key, side.file + ": label disagrees with the sample table");
      }
    } else if (EndsWith(side.file, ".offsets.npy")) {
      if (info.descr != "<i8" || info.shape != std::vector<uint64_t>{n + 1} ||
          text.size() != info.data_offset + 8 * (n + 1)) {
        Problem("", side.file + ": not an int64 array of " + std::to_string(n + 1) + " offsets");
        return;
      }
      for (uint64_t i = 0; i < n; ++i) {
        const int64_t from = int_at(i, 8), to = int_at(i + 1, 8);
        const uint64_t base = EndsWith(shard_.file, ".zst") ? 0 : data_offset_;
        if (uint64_t(from) + base != table_[i].offset || uint64_t(to - from) != table_[i].size) {
          Problem(table_[i].key, side.file + ": offsets disagree with the sample table");
        }
      }
    } else if (EndsWith(side.file, ".chunks.npy")) {
      // CheckChunks then reads the frames at these offsets from the shard itself.
      s = ParseRawChunkIndex(text, UINT64_MAX, &chunk_offsets_);
      if (!s.ok()) Problem("", side.file + ": " + s.message());
    } else if (EndsWith(side.file, ".shapes.npy")) {
      if (info.descr != "<i4" || info.shape != std::vector<uint64_t>{n, 3} ||
          text.size() != info.data_offset + 12 * n) {
        Problem("", side.file + ": not an int32 array of " + std::to_string(n) + " shapes");
        return;
      }
      for (uint64_t i = 0; i < n; ++i) {
        if (uint64_t(int_at(3 * i, 4)) != table_[i].height || uint64_t(int_at(3 * i + 1, 4)) != table_[i].width ||
            uint64_t(int_at(3 * i, 4)) * int_at(3 * i + 1, 4) * 3 != table_[i].size) {
          Problem(table_[i].key, side.file + ": shape disagrees with the sample table");
        }
      }
    }
  }

  // A flag a sample, each 0 or 1, as many set as the manifest counts masks of `field`.
  void CheckMaskPresence(const std::string& file, const std::string& field, const std::string& text) {
    checked_masks_.insert(file);
    NpyInfo info;
    const uint64_t n = table_.size();
    if (!ParseNpyHeader(text, &info).ok() || info.descr != "|u1" || info.shape != std::vector<uint64_t>{n} ||
        text.size() != info.data_offset + n) {
      Problem("", file + ": not a uint8 array of " + std::to_string(n) + " presence flags");
      return;
    }
    uint64_t present = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const char flag = text[info.data_offset + i];
      if (flag != '\0' && flag != '\1') {
        Problem(table_[i].key, file + ": presence flag is " + std::to_string(int(flag)) + ", not 0 or 1");
        return;
      }
      present += flag == '\1';
    }
    const auto counted = shard_.fields.find(field);
    if (present != (counted == shard_.fields.end() ? 0 : counted->second)) {
      Problem("", file + ": " + std::to_string(present) + " masks present, the manifest counts " +
                      std::to_string(counted == shard_.fields.end() ? 0 : counted->second));
    }
  }

  // A slot a sample, of its image's width x height, laid out as the images are (raw_format.h). Only
  // its header is read; the rest streams through the checksum, never held (it is a third the size
  // of the shard's pixels).
  void CheckMaskArray(const SideFile& side) {
    checked_masks_.insert(side.file);
    uint64_t size = 0;
    if (!ChecksumSideFileForCheck(env_, dir_, shard_.file, side, check_, &size)) return;
    uint64_t pixels = 0;
    for (const SampleRecord& r : table_) pixels += uint64_t(r.width) * r.height;
    std::vector<uint64_t> expected{pixels};
    if (!options_.value("keep_size", false)) {
      const auto crop = options_.value("crop", std::vector<uint64_t>{0, 0});
      expected = {table_.size(), crop.size() == 2 ? crop[0] : 0, crop.size() == 2 ? crop[1] : 0};
    }
    std::string head;
    NpyInfo info;
    if (!ReadNpyHead(JoinPath(dir_, side.file), &head) || !ParseNpyHeader(head, &info).ok() || info.descr != "|u1" ||
        info.fortran_order || info.shape != expected || info.data_offset != kNpyHeaderBytes ||
        size != kNpyHeaderBytes + pixels) {
      Problem("",
              side.file + ": not the uint8 mask array of this shard's " + std::to_string(table_.size()) + " images");
    }
  }

  // A line a sample, each an object of strings, and as many of each field as the manifest counts.
  void CheckFields(const std::string& file, const std::string& text) {
    std::map<std::string, uint64_t> counts;
    std::istringstream in(text);
    std::string line;
    size_t i = 0;
    for (; std::getline(in, line); ++i) {
      const std::string key = i < table_.size() ? table_[i].key : "";
      const nlohmann::json fields = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      const bool strings = fields.is_object() && std::all_of(fields.begin(), fields.end(),
                                                             [](const nlohmann::json& v) { return v.is_string(); });
      if (!strings) {
        Problem(key, file + ": line " + std::to_string(i + 1) + " is not a JSON object of strings");
        return;
      }
      for (const auto& item : fields.items()) ++counts[item.key()];
    }
    std::map<std::string, uint64_t> text_counts;  // masks are counted by their presence files
    for (const auto& [field, count] : shard_.fields) {
      if (!IsImageFieldKind(FieldKind(field))) text_counts[field] = count;
    }
    if (i != table_.size()) {
      Problem("", file + ": " + std::to_string(i) + " lines for " + std::to_string(table_.size()) + " samples");
    } else if (counts != text_counts) {
      Problem("", file + ": field counts disagree with the manifest");
    }
  }

  Env* env_;
  const std::string& dir_;
  const ShardEntry& shard_;
  const nlohmann::json& options_;
  ShardCheck* check_;
  std::vector<SampleRecord> table_;
  uint64_t data_offset_ = kNpyHeaderBytes;
  std::vector<int64_t> chunk_offsets_;
  std::set<std::string> checked_masks_;  // mask arrays and presence files seen
};

}  // namespace

void VerifyRawShard(Env* env, const std::string& dir, const ShardEntry& shard, const nlohmann::json& pack_options,
                    ShardCheck* check) {
  RawShardChecker(env, dir, shard, pack_options, check).Run();
}

}  // namespace shardpack
