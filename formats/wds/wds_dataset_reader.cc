#include "formats/wds/wds_dataset_reader.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <string_view>

#include "formats/common/format.h"
#include "formats/common/shard_file.h"
#include "formats/wds/dali_index.h"
#include "formats/wds/tar_shard_reader.h"
#include "formats/wds/wds_naming.h"
#include "ground/line_file.h"
#include "ground/packed_keys.h"
#include "ground/sample_table.h"

namespace shardpack {

class WdsDatasetReader::Shard {
 public:
  Shard() : id_(next_id_.fetch_add(1, std::memory_order_relaxed)) {}
  virtual ~Shard() = default;
  // Where sample `local` (< the shard's sample count) lies in the shard file.
  virtual Status Locate(size_t local, WdsSampleLocation* sample) const = 0;
  // `size` bytes at `offset` of the shard file, part of `sample` (located by Locate).
  virtual Status ReadPart(const WdsSampleLocation& /*sample*/, uint64_t offset, size_t size, char* out) const {
    return file_->Read(offset, size, out);
  }
  virtual uint64_t memory_bytes() const = 0;
  // This shard object's number, never reused in the process: what a thread's note of the last
  // sample it located (or read) names, so that a shard dropped and loaded again is not mistaken
  // for the one before at the same address.
  uint64_t id() const { return id_; }

 protected:
  std::unique_ptr<RandomAccessFile> file_;

 private:
  static inline std::atomic<uint64_t> next_id_{1};
  const uint64_t id_;
};

namespace {

using Shard = WdsDatasetReader::Shard;

// Sample `record`'s location from its members in the DALI index: its image is the member of its
// format's extension (the last such), its metadata "meta.json" where the sample's own files include
// a "json", else "json"; every other member besides the class is one of its fields. Each must lie
// inside the shard (`shard_bytes` long).
Status LocateMembers(const std::string& shard_file, uint64_t shard_bytes, const SampleRecord& record,
                     const std::vector<DaliIndexMemberView>& members, WdsSampleLocation* e) {
  const std::string_view ext = ImageExtension(record.format);
  const DaliIndexMemberView* image = nullptr;
  const DaliIndexMemberView* metadata = nullptr;
  for (const DaliIndexMemberView& m : members) {
    if (m.ext == ext) image = &m;
    if (m.ext == kWdsMetaJsonField || (m.ext == "json" && metadata == nullptr)) metadata = &m;
  }
  if (image == nullptr) return Status::DataLoss(shard_file + ": sample " + record.key + " has no image member");
  e->key.assign(record.key);
  e->label = record.label, e->format = record.format;
  e->sample_offset = record.offset, e->sample_size = record.size, e->sample_xxh64 = record.xxh64;
  e->offset = image->offset, e->size = image->size, e->json_offset = 0, e->json_size = 0;
  e->fields.clear();
  if (metadata != nullptr) e->json_offset = metadata->offset, e->json_size = metadata->size;
  for (const DaliIndexMemberView& m : members) {
    // A .cls member is the sample's label; without a label (pack --layout samples, an unlabelled
    // tree) it is a file of the sample's own, kept as a field.
    if (&m == image || &m == metadata || (m.ext == "cls" && record.label >= 0)) continue;
    SHARDPACK_RETURN_IF_ERROR(CheckWithinShard(shard_file, record.key, m.offset, m.size, shard_bytes));
    e->fields.push_back({std::string(m.ext), m.offset, m.size});
  }
  SHARDPACK_RETURN_IF_ERROR(CheckWithinShard(shard_file, record.key, e->offset, e->size, shard_bytes));
  return CheckWithinShard(shard_file, record.key, e->json_offset, e->json_size, shard_bytes);
}

// What locating a sample takes, kept per thread and reused, so that reading a sample allocates
// nothing (a loader reads thousands a second; tests/loader_alloc_test.cc counts).
struct LocateScratch {
  std::string table_lines, index_lines;
  SampleRecord record;
  std::vector<DaliIndexMemberView> members;
  WdsSampleLocation sample;
  // Whose location `sample` is (Shard::id, 0: none, and the sample's number there): a loader reads
  // a sample's image and then its metadata, each of which locates it.
  uint64_t located_shard = 0;
  size_t located_local = 0;
};

LocateScratch& ThreadScratch() {
  thread_local LocateScratch scratch;
  return scratch;
}

// A sample's bytes read from a server, whole and checked, kept per thread for the reads of its
// other parts that follow (the image, then the metadata): one request a sample.
struct SampleCopy {
  uint64_t shard = 0;  // Shard::id; 0: none
  uint64_t offset = 0;
  std::string bytes;
};

SampleCopy& ThreadSampleCopy() {
  thread_local SampleCopy copy;
  return copy;
}

// A shard of a dataset folder: its sample table and DALI index checked against the manifest and
// kept open as LineFiles; a sample's line of each is read and parsed when the sample is asked for.
class TableShard final : public Shard {
 public:
  static Status Open(Env* env, const std::string& dir, const ShardEntry& shard, std::unique_ptr<Shard>* opened) {
    std::unique_ptr<TableShard> s(new TableShard());
    s->file_name_ = shard.file;
    SHARDPACK_RETURN_IF_ERROR(OpenShardFile(env, dir, shard, &s->file_, &s->bytes_));
    std::string header;
    SHARDPACK_RETURN_IF_ERROR(LineFile::Open(env, dir, shard.sample_table, &header, &s->table_));
    const std::string& table = s->table_->path();
    s->version_ = SampleTableVersion(header);
    if (s->version_ == 0) {
      return Status::DataLoss(table + ": sample table does not start with the expected header (run shardpack verify)");
    }
    if (!s->table_->ends_with_newline()) {
      return Status::DataLoss(table + ": sample table line " + std::to_string(s->table_->lines() + 1) +
                              " is cut short (run shardpack verify)");
    }
    if (s->table_->lines() != shard.samples) {
      return Status::DataLoss(table + " lists " + std::to_string(s->table_->lines()) + " samples, the manifest " +
                              std::to_string(shard.samples) + " (run shardpack verify)");
    }
    SHARDPACK_RETURN_IF_ERROR(LineFile::Open(env, dir, shard.index, &header, &s->index_));
    uint64_t count = 0;
    if (!ParseDaliIndexHeader(header, &count)) {
      return Status::DataLoss(s->index_->path() + ": DALI index line 1: expected '" + kDaliIndexVersion +
                              " <samples>' (run shardpack verify)");
    }
    if (count != shard.samples || s->index_->lines() != shard.samples) {
      return Status::DataLoss(s->index_->path() + ": index disagrees with the manifest (run shardpack verify)");
    }
    *opened = std::move(s);
    return Status::OK();
  }

  Status Locate(size_t local, WdsSampleLocation* sample) const override {
    LocateScratch& scratch = ThreadScratch();
    std::string_view line;
    SHARDPACK_RETURN_IF_ERROR(table_->ReadLine(local, &scratch.table_lines, &line));
    if (!ParseSampleRecord(line, version_, &scratch.record)) {
      return Status::DataLoss(table_->path() + ": sample table line " + std::to_string(local + 2) +
                              " is malformed (run shardpack verify)");
    }
    SHARDPACK_RETURN_IF_ERROR(index_->ReadLine(local, &scratch.index_lines, &line));
    scratch.members.clear();
    const Status s = ParseDaliIndexLine(line, &scratch.members);
    if (!s.ok()) {
      return Status::DataLoss(index_->path() + ": DALI index line " + std::to_string(local + 2) + ": " + s.message() +
                              " (run shardpack verify)");
    }
    return LocateMembers(file_name_, bytes_, scratch.record, scratch.members, sample);
  }

  // From a server (the file's reads are requests, and nothing on this machine checked the shard),
  // the sample is read whole, in one request, and checked against its sample table's XXH64, as the
  // cache checks a shard before it is read; its parts then come from that copy.
  Status ReadPart(const WdsSampleLocation& e, uint64_t offset, size_t size, char* out) const override {
    if (!file_->reads_are_requests()) return file_->Read(offset, size, out);
    if (offset < e.sample_offset || size > e.sample_size || offset - e.sample_offset > e.sample_size - size) {
      return Status::DataLoss(file_name_ + ": sample " + e.key + " has a member at bytes " + std::to_string(offset) +
                              "-" + std::to_string(offset + size) + ", outside its bytes in the sample table (" +
                              std::to_string(e.sample_offset) + "-" + std::to_string(e.sample_offset + e.sample_size) +
                              "; run shardpack verify)");
    }
    SampleCopy& copy = ThreadSampleCopy();
    if (copy.shard != id() || copy.offset != e.sample_offset || copy.bytes.size() != e.sample_size) {
      copy.shard = 0;
      copy.bytes.resize(e.sample_size);
      SHARDPACK_RETURN_IF_ERROR(ReadCheckedSample(*file_, file_name_, e.key, e.sample_offset, e.sample_size,
                                                  e.sample_xxh64, copy.bytes.data()));
      copy.shard = id(), copy.offset = e.sample_offset;
    }
    std::memcpy(out, copy.bytes.data() + (offset - e.sample_offset), size);
    return Status::OK();
  }

  uint64_t memory_bytes() const override {
    return sizeof(*this) + file_name_.capacity() + table_->memory_bytes() + index_->memory_bytes() +
           file_->memory_bytes();
  }

 private:
  TableShard() = default;
  std::string file_name_;  // as the manifest names it
  uint64_t bytes_ = 0;
  int version_ = 0;  // of the sample table
  std::unique_ptr<LineFile> table_, index_;
};

// A tar shard by path, indexed whole (IndexWdsShard) and kept in fixed-width records and the keys
// back to back: about 60 bytes a sample besides its key, instead of a string and a vector each.
class IndexedShard final : public Shard {
 public:
  static Status Open(Env* env, const std::string& path, std::unique_ptr<IndexedShard>* opened) {
    std::vector<WdsSampleLocation> entries;
    SHARDPACK_RETURN_IF_ERROR(IndexWdsShard(env, path, &entries));
    std::unique_ptr<IndexedShard> s(new IndexedShard());
    s->samples_.reserve(entries.size());
    s->keys_.Reserve(entries.size());
    for (const WdsSampleLocation& e : entries) s->Add(e);
    SHARDPACK_RETURN_IF_ERROR(env->NewRandomAccessFile(path, &s->file_));
    *opened = std::move(s);
    return Status::OK();
  }
  size_t samples() const { return samples_.size(); }

  Status Locate(size_t local, WdsSampleLocation* out) const override {
    const Sample& e = samples_[local];
    out->key.assign(keys_[local]);
    out->label = e.label, out->format = e.format;
    out->offset = e.offset, out->size = e.size, out->json_offset = e.json_offset, out->json_size = e.json_size;
    const uint32_t begin = local == 0 ? 0 : samples_[local - 1].fields_end;
    out->fields.assign(fields_.begin() + begin, fields_.begin() + e.fields_end);
    return Status::OK();
  }

  uint64_t memory_bytes() const override {
    uint64_t bytes = sizeof(*this) + samples_.capacity() * sizeof(Sample) + keys_.memory_bytes();
    for (const WdsSampleLocation::Field& f : fields_) bytes += sizeof(f) + f.name.capacity();
    return bytes;
  }

 private:
  struct Sample {
    uint64_t offset = 0, size = 0;            // the image member's data
    uint64_t json_offset = 0, json_size = 0;  // the metadata member's; size 0 without one
    int32_t label = -1;
    ImageFormat format = ImageFormat::kUnknown;
    uint32_t fields_end = 0;  // in fields_: this sample's are [previous fields_end, fields_end)
  };
  IndexedShard() = default;
  void Add(const WdsSampleLocation& e) {
    Sample s;
    s.offset = e.offset, s.size = e.size, s.json_offset = e.json_offset, s.json_size = e.json_size;
    s.label = e.label, s.format = e.format;
    keys_.Add(e.key);
    fields_.insert(fields_.end(), e.fields.begin(), e.fields.end());
    s.fields_end = uint32_t(fields_.size());
    samples_.push_back(s);
  }
  std::vector<Sample> samples_;
  PackedKeys keys_;
  std::vector<WdsSampleLocation::Field> fields_;  // the rare other members (captions, masks)
};

// The same shard by path again after the index kept was dropped: it must hold the `expected` samples
// it held then.
Status IndexTarShardAgain(Env* env, const std::string& path, uint64_t expected, std::unique_ptr<Shard>* loaded) {
  std::unique_ptr<IndexedShard> shard;
  SHARDPACK_RETURN_IF_ERROR(IndexedShard::Open(env, path, &shard));
  if (shard->samples() != expected) {
    return Status::DataLoss(path + " now holds " + std::to_string(shard->samples()) + " samples, not the " +
                            std::to_string(expected) + " it held when it was opened: it changed while being read");
  }
  *loaded = std::move(shard);
  return Status::OK();
}

}  // namespace

// The plain tars of a reader's compressed shards, in one folder made for them; removed, folder
// and all, when the reader goes, or when the process exits with the reader still there (a Python
// object left to the end of the interpreter may never be destroyed). A killed process leaves them.
class WdsDatasetReader::UnpackedShards {
 public:
  explicit UnpackedShards(Env* env) : env_(env) {
    static std::once_flag registered;
    std::call_once(registered, [] { std::atexit(RemoveAllAtExit); });
    std::lock_guard<std::mutex> lock(LiveMutex());
    Live().insert(this);
  }
  ~UnpackedShards() {
    {
      std::lock_guard<std::mutex> lock(LiveMutex());
      Live().erase(this);
    }
    Remove();
  }
  // The plain tar of `path` (the i-th shard), decompressed into the folder.
  Status Unpack(const std::string& path, size_t i, std::string* plain) {
    if (dir_.empty()) {
      static std::atomic<uint64_t> made{0};
      std::error_code error;
      const std::string tmp = std::filesystem::temp_directory_path(error).string();
      dir_ = JoinPath(error ? "/tmp" : tmp,
                      "shardpack-unpacked-" + std::to_string(getpid()) + "-" + std::to_string(made.fetch_add(1)));
      SHARDPACK_RETURN_IF_ERROR(env_->CreateDirs(dir_));
    }
    // Numbered, so that shards of one name in different folders do not meet; named after the
    // shard, so that a message about the copy says which it is.
    std::string name = BaseName(path);
    if (EndsWith(name, ".tgz")) name.replace(name.size() - 4, 4, ".tar");
    if (EndsWith(name, ".gz")) name.resize(name.size() - 3);
    *plain = JoinPath(dir_, std::to_string(i) + "-" + name);
    std::unique_ptr<WritableFile> out;
    SHARDPACK_RETURN_IF_ERROR(env_->NewWritableFile(*plain, &out));
    files_.push_back(*plain);
    return TarShardReader::Decompress(env_, path, out.get());
  }

 private:
  void Remove() {
    for (const std::string& f : files_) (void)env_->RemoveFile(f);
    if (!dir_.empty()) (void)env_->RemoveEmptyDir(dir_);
    files_.clear();
    dir_.clear();
  }
  // Every UnpackedShards alive in the process (leaked ones too, on purpose: that is what they are for).
  static std::set<UnpackedShards*>& Live() {
    static auto* live = new std::set<UnpackedShards*>;
    return *live;
  }
  static std::mutex& LiveMutex() {
    static auto* mu = new std::mutex;
    return *mu;
  }
  static void RemoveAllAtExit() {
    std::lock_guard<std::mutex> lock(LiveMutex());
    for (UnpackedShards* u : Live()) u->Remove();
  }

  Env* env_;
  std::string dir_;
  std::vector<std::string> files_;
};

WdsDatasetReader::WdsDatasetReader(std::shared_ptr<const CompactManifest> manifest)
    : DatasetReader(std::move(manifest)), locator_(this->manifest().shards) {}
WdsDatasetReader::~WdsDatasetReader() = default;

Status WdsDatasetReader::Open(Env* env, const std::string& dir, std::shared_ptr<const CompactManifest> manifest,
                              uint64_t budget, std::unique_ptr<DatasetReader>* reader) {
  std::unique_ptr<WdsDatasetReader> r(new WdsDatasetReader(std::move(manifest)));
  const ShardTable* shards = &r->manifest().shards;
  r->shards_ = std::make_unique<ShardIndexCache<Shard>>(
      shards->size(), budget, [env, dir, shards](size_t shard, std::unique_ptr<Shard>* loaded) {
        return TableShard::Open(env, dir, shards->entry(shard), loaded);
      });
  *reader = std::move(r);
  return Status::OK();
}

Status WdsDatasetReader::OpenShards(Env* env, const std::vector<std::string>& paths, uint64_t budget,
                                    std::unique_ptr<DatasetReader>* reader) {
  Manifest manifest;
  manifest.name =
      paths.size() == 1 ? paths.front() : paths.front() + " (+" + std::to_string(paths.size() - 1) + " shards)";
  manifest.format = DatasetFormat::kWebDataset;
  // Indexed now, for their sample counts: each index is kept (within the bound), so that a shard
  // streamed from a URL is not fetched again to index it when its samples are read.
  std::vector<std::unique_ptr<IndexedShard>> indexed;
  auto unpacked = std::make_unique<UnpackedShards>(env);
  for (size_t i = 0; i < paths.size(); ++i) {
    // Told by its name, so that a shard streamed from a URL is not fetched once more to look at its
    // first bytes (a compressed shard named otherwise is refused by the index, saying so).
    std::string path = paths[i];
    if (EndsWith(path, ".gz") || EndsWith(path, ".tgz"))
      SHARDPACK_RETURN_IF_ERROR(unpacked->Unpack(paths[i], i, &path));
    std::unique_ptr<IndexedShard> samples;
    SHARDPACK_RETURN_IF_ERROR(IndexedShard::Open(env, path, &samples));
    ShardEntry shard;
    shard.file = path;
    shard.samples = samples->samples();
    manifest.samples += shard.samples;
    manifest.shards.push_back(std::move(shard));
    indexed.push_back(std::move(samples));
  }
  std::unique_ptr<WdsDatasetReader> r(
      new WdsDatasetReader(std::make_shared<const CompactManifest>(std::move(manifest))));
  r->unpacked_ = std::move(unpacked);
  r->by_path_ = true;
  const ShardTable* shards = &r->manifest().shards;
  r->shards_ = std::make_unique<ShardIndexCache<Shard>>(
      shards->size(), budget, [env, shards](size_t shard, std::unique_ptr<Shard>* loaded) {
        return IndexTarShardAgain(env, std::string(shards->file(shard)), shards->samples(shard), loaded);
      });
  for (size_t i = 0; i < indexed.size(); ++i) r->shards_->Put(i, std::move(indexed[i]));
  *reader = std::move(r);
  return Status::OK();
}

Status WdsDatasetReader::Find(uint64_t index, std::shared_ptr<const Shard>* shard,
                              const WdsSampleLocation** sample) const {
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  size_t s = 0;
  uint64_t local = 0;
  locator_.Locate(index, &s, &local);
  SHARDPACK_RETURN_IF_ERROR(shards_->Get(s, shard));
  LocateScratch& scratch = ThreadScratch();
  *sample = &scratch.sample;
  if (scratch.located_shard == (*shard)->id() && scratch.located_local == local) return Status::OK();
  scratch.located_shard = 0;
  SHARDPACK_RETURN_IF_ERROR((*shard)->Locate(size_t(local), &scratch.sample));
  scratch.located_shard = (*shard)->id(), scratch.located_local = size_t(local);
  return Status::OK();
}

Status WdsDatasetReader::Read(uint64_t index, ReadSample* out) const {
  std::shared_ptr<const Shard> shard;
  const WdsSampleLocation* e = nullptr;
  SHARDPACK_RETURN_IF_ERROR(Find(index, &shard, &e));
  out->key.assign(e->key);
  out->label = e->label;
  out->format = e->format;
  out->encoded.resize(e->size);
  return shard->ReadPart(*e, e->offset, e->size, out->encoded.data());
}

Status WdsDatasetReader::ReadMetadata(uint64_t index, std::string* json) const {
  json->clear();
  std::shared_ptr<const Shard> shard;
  const WdsSampleLocation* e = nullptr;
  SHARDPACK_RETURN_IF_ERROR(Find(index, &shard, &e));
  json->resize(e->json_size);
  return e->json_size == 0 ? Status::OK() : shard->ReadPart(*e, e->json_offset, e->json_size, json->data());
}

Status WdsDatasetReader::ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const {
  data->clear();
  *present = false;
  std::shared_ptr<const Shard> shard;
  const WdsSampleLocation* e = nullptr;
  SHARDPACK_RETURN_IF_ERROR(Find(index, &shard, &e));
  for (const WdsSampleLocation::Field& f : e->fields) {
    if (f.name != name) continue;
    *present = true;
    data->resize(f.size);
    return f.size == 0 ? Status::OK() : shard->ReadPart(*e, f.offset, f.size, data->data());
  }
  return Status::OK();
}

Status WdsDatasetReader::ReadFieldNames(uint64_t index, std::vector<std::string>* names) const {
  if (!by_path_) return DatasetReader::ReadFieldNames(index, names);
  names->clear();
  std::shared_ptr<const Shard> shard;
  const WdsSampleLocation* e = nullptr;
  SHARDPACK_RETURN_IF_ERROR(Find(index, &shard, &e));
  for (const WdsSampleLocation::Field& f : e->fields) names->push_back(f.name);
  return Status::OK();
}

}  // namespace shardpack
