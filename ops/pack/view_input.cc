#include "ops/pack/view_input.h"

#include "formats/registry/registry.h"
#include "ground/manifest_json.h"
#include "storage/location.h"
#include "storage/remote_dataset.h"

namespace shardpack {
namespace {

class ViewInput : public PackInput {
 public:
  ViewInput(Env* env, std::string view_dir, ViewManifest view, std::vector<uint64_t> base_counts,
            std::unique_ptr<PackInput> base)
      : env_(env),
        view_dir_(std::move(view_dir)),
        view_(std::move(view)),
        base_counts_(std::move(base_counts)),
        base_(std::move(base)) {
    for (size_t i = 0, first = 0; i < base_counts_.size(); first += base_counts_[i], ++i) base_first_.push_back(first);
  }

  const std::vector<std::string>& class_names() const override { return base_->class_names(); }
  std::vector<std::string> empty_classes() const override { return base_->empty_classes(); }
  std::vector<SkippedFile> initial_skips() const override { return base_->initial_skips(); }
  void KeepFields(bool keep) override { base_->KeepFields(keep); }
  uint64_t expected() const override { return view_.samples; }
  Status Load(PackItem* item) const override { return base_->Load(item); }

  Status Next(PackItem* item, bool* done) override {
    uint64_t want = 0;
    SHARDPACK_RETURN_IF_ERROR(NextSelected(&want, done));
    if (*done) return Status::OK();
    // The base input gives every sample in order; those before the next selected one are passed over.
    for (;;) {
      bool base_done = false;
      SHARDPACK_RETURN_IF_ERROR(base_->Next(item, &base_done));
      if (base_done) {
        return Status::DataLoss("the base of view " + view_dir_ + " ended at sample " + std::to_string(base_next_) +
                                ", before sample " + std::to_string(want) + " the view selects; run shardpack verify");
      }
      if (base_next_++ == want) break;
    }
    return Status::OK();
  }

 private:
  // The base index of the view's next sample; *done after the last.
  Status NextSelected(uint64_t* base_index, bool* done) {
    while (shard_ < view_.shards.size() && in_shard_ == positions_.size()) {
      if (loaded_ == shard_ + 1) {  // this shard's positions are used up
        ++shard_;
        in_shard_ = 0;
        positions_.clear();
        continue;
      }
      const ViewShard& s = view_.shards[shard_];
      SHARDPACK_RETURN_IF_ERROR(ReadSelection(env_, view_dir_, s, base_counts_[s.base_shard], &positions_));
      loaded_ = shard_ + 1;
    }
    *done = shard_ == view_.shards.size();
    if (!*done) *base_index = base_first_[view_.shards[shard_].base_shard] + positions_[in_shard_++];
    return Status::OK();
  }

  Env* const env_;
  const std::string view_dir_;
  const ViewManifest view_;
  const std::vector<uint64_t> base_counts_;
  std::vector<uint64_t> base_first_;
  const std::unique_ptr<PackInput> base_;
  size_t shard_ = 0, loaded_ = 0, in_shard_ = 0;  // loaded_: shard_ + 1 once its positions are read
  std::vector<uint32_t> positions_;
  uint64_t base_next_ = 0;  // the base index of the sample base_->Next() gives next
};

}  // namespace

Status OpenViewConvertInput(Env* env, const std::string& view_dir, const ViewManifest& view, const PackOptions& options,
                            std::unique_ptr<PackInput>* input) {
  const std::string prefix = "the base of view " + view_dir + ": ";
  Location base_location;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(LocationFrom(view_dir, view.base), &base_location).WithPrefix(prefix));
  std::string base_dir;
  SHARDPACK_RETURN_IF_ERROR(ResolveDatasetLocation(base_location, options.remote, env, &base_dir).WithPrefix(prefix));
  Manifest base;
  SHARDPACK_RETURN_IF_ERROR(ReadCheckedManifest(env, base_dir, &base).WithPrefix(prefix));
  std::vector<uint64_t> counts;
  for (const ShardEntry& e : base.shards) counts.push_back(e.samples);
  SHARDPACK_RETURN_IF_ERROR(CheckViewBase(
      view, view_dir, base, counts, [&](size_t i) { return std::string_view(base.shards[i].xxh64); },
      base_location.shown));
  const Format* format = nullptr;
  SHARDPACK_RETURN_IF_ERROR(FindFormatOf(base_dir, base, &format));
  std::unique_ptr<PackInput> base_input;
  SHARDPACK_RETURN_IF_ERROR(format->OpenConvertInput(env, base_dir, base, options.max_sample_bytes, &base_input));
  input->reset(new ViewInput(env, view_dir, view, std::move(counts), std::move(base_input)));
  return Status::OK();
}

}  // namespace shardpack
