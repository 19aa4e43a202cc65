#include "formats/wds/wds_shard_index.h"

#include <memory>
#include <unordered_set>

#include "formats/wds/dali_index.h"
#include "formats/wds/tar_shard_reader.h"
#include "formats/wds/wds_naming.h"

namespace shardpack {
namespace {

constexpr uint64_t kMaxClsBytes = 64;

bool IsCls(const std::string& ext) { return LowerExtension(ext) == "cls"; }
bool IsJson(const std::string& ext) { return LowerExtension(ext) == "json"; }

// A member besides the image and the class: one of the sample's fields. Its ".json" is also what
// ReadMetadata returns (a third-party shard has no shardpack metadata).
void AddField(const std::string& ext, uint64_t offset, uint64_t size, WdsSampleLocation* s) {
  if (IsJson(ext)) s->json_offset = offset, s->json_size = size;
  s->fields.push_back({ext, offset, size});
}

// Builds the locations from a DALI index (shardpack's own, or DALI's wds2idx output).
Status IndexFromDaliIndex(Env* env, const std::string& path, const std::string& index_path,
                          std::vector<WdsSampleLocation>* samples) {
  std::string text;
  std::vector<DaliIndexSample> index;
  SHARDPACK_RETURN_IF_ERROR(env->ReadFile(index_path, uint64_t(1) << 32, &text));
  SHARDPACK_RETURN_IF_ERROR(ParseDaliIndex(text, &index));
  uint64_t file_size = 0;
  SHARDPACK_RETURN_IF_ERROR(env->GetFileSize(path, &file_size));
  std::unique_ptr<RandomAccessFile> file;
  SHARDPACK_RETURN_IF_ERROR(env->NewRandomAccessFile(path, &file));
  for (const DaliIndexSample& members : index) {
    WdsSampleLocation s;
    std::string ext;
    for (const DaliIndexMember& m : members) {
      if (m.offset > file_size || m.size > file_size - m.offset) {
        return Status::DataLoss(index_path + ": member '" + m.name + "' lies past the end of " + path +
                                " (a stale index? delete it and it is rebuilt from the tar)");
      }
      if (s.key.empty()) SplitWdsMemberName(m.name, &s.key, &ext);
      const ImageFormat format = WdsImageFormat(m.ext);
      if (format != ImageFormat::kUnknown && s.format == ImageFormat::kUnknown) {
        s.format = format;
        s.offset = m.offset;
        s.size = m.size;
      } else if (IsCls(m.ext)) {
        const bool small = m.size <= kMaxClsBytes;
        std::string cls(small ? m.size : 0, '\0');
        if (small) SHARDPACK_RETURN_IF_ERROR(file->Read(m.offset, m.size, cls.data()));
        if (!small || !ParseClsField(cls, &s.label)) {
          s.label = -1;
          AddField(m.ext, m.offset, m.size, &s);  // no integer: kept as it is, not lost
        }
      } else {
        AddField(m.ext, m.offset, m.size, &s);
      }
    }
    if (s.format == ImageFormat::kUnknown) {
      return Status::DataLoss(path + ": sample '" + s.key + "' has no image member (jpg, jpeg, png, webp, bmp)");
    }
    samples->push_back(std::move(s));
  }
  return Status::OK();
}

// Builds the locations by reading the tar's headers (and the small .cls members).
Status IndexByScanning(Env* env, const std::string& path, std::vector<WdsSampleLocation>* samples) {
  std::unique_ptr<TarShardReader> reader;
  SHARDPACK_RETURN_IF_ERROR(TarShardReader::Open(env, path, &reader));
  if (reader->compressed()) {  // (WdsDatasetReader::OpenShards decompresses such a shard first)
    return Status::Unsupported(path +
                               ": a compressed shard cannot be read at random; decompress it (gunzip) "
                               "or repack it with shardpack convert");
  }
  // A tar cut short can end, as libarchive reads it, like a whole one: the data it does not read is
  // skipped by seeking, which passes the end of a file silently. So every member must end within
  // the file, where the Env knows its size (a shard streamed from a URL without a manifest has none
  // yet, 0, and arrives whole or not at all).
  uint64_t file_size = 0;
  SHARDPACK_RETURN_IF_ERROR(env->GetFileSize(path, &file_size));
  std::unordered_set<std::string> finished;  // keys of the samples already complete
  WdsSampleLocation current;
  bool open = false;
  auto finish = [&]() -> Status {
    if (!open) return Status::OK();
    open = false;
    if (current.format == ImageFormat::kUnknown) {
      return Status::DataLoss(path + ": sample '" + current.key + "' has no image member (jpg, jpeg, png, webp, bmp)");
    }
    finished.insert(current.key);
    samples->push_back(current);
    return Status::OK();
  };
  for (;;) {
    TarMember m;
    bool done = false;
    SHARDPACK_RETURN_IF_ERROR(reader->Next(&m, &done));
    if (done) return finish();
    if (m.directory) continue;
    if (!m.regular) return Status::DataLoss(path + ": member '" + m.name + "' is a link or special file; refusing it");
    if (file_size > 0 && (m.data_offset > file_size || m.size > file_size - m.data_offset)) {
      return Status::DataLoss(path + ": member '" + m.name + "' ends past the end of the file (" +
                              std::to_string(file_size) + " bytes): the shard is cut short");
    }
    if (IsUnsafeMemberName(m.name)) {
      return Status::DataLoss(path + ": member '" + m.name + "' has an absolute or '..' path; refusing it");
    }
    std::string key, ext;
    if (!SplitWdsMemberName(m.name, &key, &ext)) continue;  // no extension, or a hidden file
    if (!open || key != current.key) {
      SHARDPACK_RETURN_IF_ERROR(finish());
      if (finished.count(key)) {
        return Status::DataLoss(path + ": member '" + m.name + "' belongs to sample '" + key +
                                "', whose members are not adjacent; write shards with the members of a sample "
                                "together (tar --sort=name, webdataset's TarWriter)");
      }
      current = WdsSampleLocation();
      current.key = key;
      open = true;
    }
    const ImageFormat format = WdsImageFormat(ext);
    if (format != ImageFormat::kUnknown && current.format == ImageFormat::kUnknown) {
      current.format = format;
      current.offset = m.data_offset;
      current.size = m.size;
    } else if (IsCls(ext)) {
      std::string cls;
      if (m.size <= kMaxClsBytes) SHARDPACK_RETURN_IF_ERROR(reader->ReadData(kMaxClsBytes, &cls));
      if (m.size > kMaxClsBytes || !ParseClsField(cls, &current.label)) {
        current.label = -1;
        AddField(ext, m.data_offset, m.size, &current);  // no integer: kept as it is, not lost
      }
    } else {
      AddField(ext, m.data_offset, m.size, &current);
    }
  }
}

}  // namespace

std::string DaliIndexPathFor(const std::string& shard_path) {
  const bool tar = shard_path.size() > 4 && shard_path.compare(shard_path.size() - 4, 4, ".tar") == 0;
  return (tar ? shard_path.substr(0, shard_path.size() - 4) : shard_path) + ".idx";
}

Status IndexWdsShard(Env* env, const std::string& path, std::vector<WdsSampleLocation>* samples) {
  samples->clear();
  const std::string index_path = DaliIndexPathFor(path);
  if (env->FileExists(index_path)) return IndexFromDaliIndex(env, path, index_path, samples);
  return IndexByScanning(env, path, samples);
}

}  // namespace shardpack
