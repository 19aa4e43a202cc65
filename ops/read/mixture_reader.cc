#include "ops/read/mixture_reader.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "ops/read/loader_fields.h"
#include "storage/location.h"

namespace shardpack {

namespace {

// Two sources are the same dataset when their shards have the same checksums and sample counts in
// the same order (a copy, or the same folder reached by two paths), or when they are the same
// location. A view (docs/views.md) lists its base's shards with the counts it takes of them.
bool SameDataset(const DatasetReader& a, const std::string& a_location, const DatasetReader& b,
                 const std::string& b_location) {
  std::error_code error;
  const auto canonical = [&error](const std::string& path) {
    return std::filesystem::weakly_canonical(path, error).string();
  };
  Location a_parsed, b_parsed;  // local folders: the same folder by two paths
  const bool local = ParseLocation(a_location, &a_parsed).ok() && ParseLocation(b_location, &b_parsed).ok() &&
                     a_parsed.local() && b_parsed.local();
  if (a_location == b_location || (local && canonical(a_location) == canonical(b_location))) return true;
  const ShardTable& x = a.manifest().shards;
  const ShardTable& y = b.manifest().shards;
  if (x.size() != y.size() || x.empty()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x.xxh64(i).empty() || x.xxh64(i) != y.xxh64(i) || x.samples(i) != y.samples(i)) return false;
  }
  return true;
}

// What `options` needs from every source and `reader`'s manifest says it lacks, as a sentence.
std::string MissingForOptions(const DatasetReader& reader, const Mixture& mixture, const LoaderOptions& options) {
  const std::string fields = FieldsMissingFor(reader.manifest(), options);
  if (!fields.empty()) return fields;
  if (mixture.shared_classes && reader.manifest().classes.empty()) {
    return "has no class names, which shared_classes maps labels by";
  }
  return "";
}

}  // namespace

Status MixtureReader::Open(const Mixture& mixture, const LoaderOptions& options,
                           std::unique_ptr<MixtureReader>* reader) {
  SHARDPACK_RETURN_IF_ERROR(CheckMixture(mixture));
  // The sources at URLs share the cache folder and, evenly, its limit.
  size_t remote_sources = 0;
  for (const MixtureSource& s : mixture.sources) {
    Location location;
    if (ParseLocation(s.location, &location).ok() && location.remote()) ++remote_sources;
  }
  RemoteOptions remote = options.remote;
  remote.sequential = !options.sampler.shuffle || options.sampler.shuffle_buffer > 0;
  if (remote.cache_limit > 0 && remote_sources > 1) remote.cache_limit /= remote_sources;
  std::vector<Source> sources(mixture.sources.size());
  Manifest manifest;
  manifest.name = "mixture";
  std::map<std::string, int32_t> shared;  // class name -> shared label
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string name = MixtureSourceName(mixture, i);
    Source& source = sources[i];
    const Status s = DatasetReader::Open(mixture.sources[i].location, options.env, &source.reader, remote);
    if (!s.ok()) return s.WithPrefix(name + ": ");
    const DatasetReader& r = *source.reader;
    for (size_t j = 0; j < i; ++j) {
      if (SameDataset(*sources[j].reader, mixture.sources[j].location, r, mixture.sources[i].location)) {
        return Status::InvalidArgument(name + " is the same dataset as " + MixtureSourceName(mixture, j) +
                                       ": give it once, with the weight (or samples, passes) of both");
      }
    }
    const std::string missing = MissingForOptions(r, mixture, options);
    if (!missing.empty()) return Status::InvalidArgument(name + " " + missing);
    if (i == 0) manifest.format = r.manifest().format;
    source.first_sample = manifest.samples;
    source.first_shard = uint32_t(manifest.shards.size());
    manifest.samples += r.size();
    manifest.bytes += r.manifest().bytes;
    for (size_t k = 0; k < r.manifest().shards.size(); ++k) manifest.shards.push_back(r.manifest().shards.entry(k));
    if (!mixture.shared_classes) continue;
    for (const std::string& cls : r.manifest().classes) {
      if (shared.emplace(cls, int32_t(manifest.classes.size())).second) manifest.classes.push_back(cls);
      source.labels.push_back(shared[cls]);
    }
  }
  reader->reset(new MixtureReader(std::move(manifest), std::move(sources)));
  return Status::OK();
}

MixtureReader::MixtureReader(Manifest manifest, std::vector<Source> sources)
    : DatasetReader(std::move(manifest)), sources_(std::move(sources)) {}

std::vector<uint64_t> MixtureReader::source_sizes() const {
  std::vector<uint64_t> sizes;
  for (const Source& s : sources_) sizes.push_back(s.reader->size());
  return sizes;
}

std::vector<std::vector<uint64_t>> MixtureReader::source_shard_sizes() const {
  std::vector<std::vector<uint64_t>> sizes;
  for (const Source& s : sources_) sizes.push_back(s.reader->manifest().shards.sample_counts());
  return sizes;
}

const MixtureReader::Source& MixtureReader::Locate(uint64_t index, uint64_t* local) const {
  // The last source whose first sample is at or before `index` (an index past the end lands in
  // the last source, whose reader refuses it).
  const auto after = std::upper_bound(sources_.begin(), sources_.end(), index,
                                      [](uint64_t i, const Source& s) { return i < s.first_sample; });
  const Source& source = *(after - 1);
  *local = index - source.first_sample;
  return source;
}

Status MixtureReader::Read(uint64_t index, ReadSample* out) const {
  uint64_t local = 0;
  const Source& source = Locate(index, &local);
  SHARDPACK_RETURN_IF_ERROR(source.reader->Read(local, out));
  if (!source.labels.empty() && out->label >= 0) {
    out->label = size_t(out->label) < source.labels.size() ? source.labels[size_t(out->label)] : -1;
  }
  return Status::OK();
}

Status MixtureReader::ReadMetadata(uint64_t index, std::string* json) const {
  uint64_t local = 0;
  const Source& source = Locate(index, &local);
  return source.reader->ReadMetadata(local, json);
}

Status MixtureReader::ReadFieldNames(uint64_t index, std::vector<std::string>* names) const {
  uint64_t local = 0;
  const Source& source = Locate(index, &local);
  return source.reader->ReadFieldNames(local, names);
}

Status MixtureReader::ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const {
  uint64_t local = 0;
  const Source& source = Locate(index, &local);
  return source.reader->ReadField(local, name, data, present);
}

Status MixtureReader::ReadMaskPixels(uint64_t index, const std::string& name, std::string* pixels,
                                     bool* present) const {
  uint64_t local = 0;
  const Source& source = Locate(index, &local);
  return source.reader->ReadMaskPixels(local, name, pixels, present);
}

bool MixtureReader::wants_read_plan() const {
  return std::any_of(sources_.begin(), sources_.end(), [](const Source& s) { return s.reader->wants_read_plan(); });
}

void MixtureReader::PlanReads(std::vector<ShardUse> uses, uint64_t position) {
  for (size_t i = 0; i < sources_.size(); ++i) {
    Source& source = sources_[i];
    if (!source.reader->wants_read_plan()) continue;
    const uint64_t end = source.first_shard + source.reader->manifest().shards.size();
    std::vector<ShardUse> own;
    for (const ShardUse& use : uses) {
      if (use.shard >= source.first_shard && use.shard < end)
        own.push_back({use.shard - source.first_shard, use.first, use.last});
    }
    source.reader->PlanReads(std::move(own), position);
  }
}

void MixtureReader::ReachedPosition(uint64_t position) {
  for (Source& source : sources_) {
    if (source.reader->wants_read_plan()) source.reader->ReachedPosition(position);
  }
}

}  // namespace shardpack
