#include "shardpack/shard_table.h"

#include <malloc.h>

namespace shardpack {
namespace {

// A record is a run of items: each string as its length (LEB128) and its bytes, each count as
// LEB128. In order: file, xxh64, the index's file and xxh64, the sample table's, the number of side
// files and each one's file and xxh64, the number of fields and each one's name and count.
void PutNumber(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(char(0x80 | (v & 0x7f)));
    v >>= 7;
  }
  out->push_back(char(v));
}

void PutString(std::string_view s, std::string* out) {
  PutNumber(s.size(), out);
  out->append(s);
}

// Reads items back from one record, which this table wrote: no bounds are checked beyond it.
class RecordReader {
 public:
  explicit RecordReader(std::string_view record) : p_(record.data()) {}
  uint64_t Number() {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t byte = uint8_t(*p_++);
      v |= uint64_t(byte & 0x7f) << shift;
      if (byte < 0x80) return v;
    }
  }
  std::string_view String() {
    const uint64_t n = Number();
    const std::string_view s(p_, n);
    p_ += n;
    return s;
  }
  SideFile Side() {
    SideFile f;
    f.file = std::string(String());
    f.xxh64 = std::string(String());
    return f;
  }

 private:
  const char* p_;
};

// Shard lists this long are worth handing the freed entries' pages back for (see ReturnFreedMemory
// in ground/manifest.cc: glibc keeps small freed pieces otherwise).
constexpr size_t kTrimAfterShards = 10000;

}  // namespace

ShardTable::ShardTable(const std::vector<ShardEntry>& shards) {
  samples_.reserve(shards.size());
  bytes_.reserve(shards.size());
  starts_.reserve(shards.size() + 1);
  for (const ShardEntry& s : shards) {
    samples_.push_back(s.samples);
    bytes_.push_back(s.bytes);
    starts_.push_back(records_.size());
    for (const std::string* item :
         {&s.file, &s.xxh64, &s.index.file, &s.index.xxh64, &s.sample_table.file, &s.sample_table.xxh64}) {
      PutString(*item, &records_);
    }
    PutNumber(s.side_files.size(), &records_);
    for (const SideFile& f : s.side_files) {
      PutString(f.file, &records_);
      PutString(f.xxh64, &records_);
    }
    PutNumber(s.fields.size(), &records_);
    for (const auto& [name, count] : s.fields) {
      PutString(name, &records_);
      PutNumber(count, &records_);
    }
  }
  starts_.push_back(records_.size());
  records_.shrink_to_fit();
}

std::string_view ShardTable::file(size_t i) const {
  return RecordReader(std::string_view(records_).substr(starts_[i])).String();
}

std::string_view ShardTable::xxh64(size_t i) const {
  RecordReader r(std::string_view(records_).substr(starts_[i]));
  r.String();
  return r.String();
}

ShardEntry ShardTable::entry(size_t i) const {
  RecordReader r(std::string_view(records_).substr(starts_[i], starts_[i + 1] - starts_[i]));
  ShardEntry e;
  e.samples = samples_[i];
  e.bytes = bytes_[i];
  e.file = std::string(r.String());
  e.xxh64 = std::string(r.String());
  e.index = r.Side();
  e.sample_table = r.Side();
  for (uint64_t n = r.Number(); n > 0; --n) e.side_files.push_back(r.Side());
  for (uint64_t n = r.Number(); n > 0; --n) {
    std::string name(r.String());
    e.fields[std::move(name)] = r.Number();
  }
  return e;
}

uint64_t ShardTable::memory_bytes() const {
  return sizeof(*this) + (samples_.capacity() + bytes_.capacity() + starts_.capacity()) * sizeof(uint64_t) +
         records_.capacity();
}

CompactManifest::CompactManifest(Manifest manifest)
    : ManifestHeader(std::move(static_cast<ManifestHeader&>(manifest))),
      shards(manifest.shards),
      field_counts(FieldCounts(manifest)) {
  const size_t count = manifest.shards.size();
  std::vector<ShardEntry>().swap(manifest.shards);
  if (count >= kTrimAfterShards) malloc_trim(0);
}

}  // namespace shardpack
