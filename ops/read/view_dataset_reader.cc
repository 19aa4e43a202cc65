#include "ops/read/view_dataset_reader.h"

#include <algorithm>

namespace shardpack {
namespace {

// The view as a manifest: the base's facts (format, classes, options: labels keep their meaning unless
// the view was relabelled),
// the view's name and count, and the base shards it reads with the view's counts of them. A shard's
// field counts say at most how many of its selected samples have the field.
Manifest ViewAsManifest(const OpenedView& view, const CompactManifest& base) {
  Manifest m;
  static_cast<ManifestHeader&>(m) = base;
  m.name = view.manifest.name;
  m.samples = view.manifest.samples;
  m.bytes = 0;
  m.skipped.clear();
  m.empty_classes.clear();
  if (!view.manifest.base_labels.empty()) m.classes = view.manifest.classes;  // relabelled (subset --relabel)
  for (const ViewShard& s : view.manifest.shards) {
    ShardEntry e = base.shards.entry(s.base_shard);
    e.samples = s.samples;
    for (auto& [field, count] : e.fields) count = std::min(count, s.samples);
    m.bytes += e.bytes;
    m.shards.push_back(std::move(e));
  }
  return m;
}

}  // namespace

Status ViewDatasetReader::Open(std::shared_ptr<const OpenedView> view, std::unique_ptr<DatasetReader> base,
                               std::unique_ptr<DatasetReader>* reader) {
  Manifest manifest = ViewAsManifest(*view, base->manifest());
  reader->reset(new ViewDatasetReader(std::move(view), std::move(base), std::move(manifest)));
  return Status::OK();
}

ViewDatasetReader::ViewDatasetReader(std::shared_ptr<const OpenedView> view, std::unique_ptr<DatasetReader> base,
                                     Manifest manifest)
    : DatasetReader(std::move(manifest)), view_(std::move(view)), base_(std::move(base)) {
  const ShardTable& base_shards = base_->manifest().shards;
  std::vector<uint64_t> base_first(base_shards.size() + 1, 0);
  for (size_t i = 0; i < base_shards.size(); ++i) base_first[i + 1] = base_first[i] + base_shards.samples(i);
  starts_.push_back(0);
  for (const ViewShard& s : view_->manifest.shards) {
    starts_.push_back(starts_.back() + s.samples);
    base_starts_.push_back(base_first[s.base_shard]);
  }
  selections_.reset(new Selection[view_->manifest.shards.size()]);
}

Status ViewDatasetReader::BaseIndex(uint64_t index, uint64_t* base_index) const {
  SHARDPACK_RETURN_IF_ERROR(CheckIndex(index));
  const size_t shard = size_t(std::upper_bound(starts_.begin(), starts_.end(), index) - starts_.begin()) - 1;
  Selection& selection = selections_[shard];
  std::call_once(selection.once, [&] {
    const ViewShard& s = view_->manifest.shards[shard];
    selection.status =
        ReadSelection(view_->env, view_->dir, s, base_->manifest().shards.samples(s.base_shard), &selection.positions);
  });
  SHARDPACK_RETURN_IF_ERROR(selection.status);
  *base_index = base_starts_[shard] + selection.positions[index - starts_[shard]];
  return Status::OK();
}

Status ViewDatasetReader::Read(uint64_t index, ReadSample* out) const {
  uint64_t base_index = 0;
  SHARDPACK_RETURN_IF_ERROR(BaseIndex(index, &base_index));
  SHARDPACK_RETURN_IF_ERROR(base_->Read(base_index, out));
  out->label = ViewLabel(view_->manifest, out->label);
  return Status::OK();
}

Status ViewDatasetReader::ReadMetadata(uint64_t index, std::string* json) const {
  uint64_t base_index = 0;
  SHARDPACK_RETURN_IF_ERROR(BaseIndex(index, &base_index));
  return base_->ReadMetadata(base_index, json);
}

Status ViewDatasetReader::ReadFieldNames(uint64_t index, std::vector<std::string>* names) const {
  uint64_t base_index = 0;
  SHARDPACK_RETURN_IF_ERROR(BaseIndex(index, &base_index));
  return base_->ReadFieldNames(base_index, names);
}

Status ViewDatasetReader::ReadField(uint64_t index, const std::string& name, std::string* data, bool* present) const {
  uint64_t base_index = 0;
  SHARDPACK_RETURN_IF_ERROR(BaseIndex(index, &base_index));
  return base_->ReadField(base_index, name, data, present);
}

Status ViewDatasetReader::ReadMaskPixels(uint64_t index, const std::string& name, std::string* pixels,
                                         bool* present) const {
  uint64_t base_index = 0;
  SHARDPACK_RETURN_IF_ERROR(BaseIndex(index, &base_index));
  return base_->ReadMaskPixels(base_index, name, pixels, present);
}

// The plan's shards are the view's; the base plans by its own numbers. Positions are the reader's
// order of reads, the same for both.
void ViewDatasetReader::PlanReads(std::vector<ShardUse> uses, uint64_t position) {
  for (ShardUse& use : uses) use.shard = uint32_t(view_->manifest.shards[use.shard].base_shard);
  base_->PlanReads(std::move(uses), position);
}

}  // namespace shardpack
