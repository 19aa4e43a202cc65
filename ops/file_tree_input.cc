#include "ops/file_tree_input.h"

#include <numeric>
#include <random>

#include "ground/sample_keys.h"
#include "ops/source_list.h"

namespace shardpack {
namespace {

// Fisher-Yates with mt19937_64, whose output sequence the C++ standard fixes, so a seed gives the
// same order with every compiler (std::shuffle's algorithm is implementation-defined).
std::vector<uint32_t> PackOrder(size_t n, bool shuffle, uint64_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  if (!shuffle) return order;
  std::mt19937_64 rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

}  // namespace

Status FileTreeInput::Open(Env* env, const std::string& src, const PackOptions& options,
                           std::unique_ptr<PackInput>* input) {
  if (!env->FileExists(src)) return Status::NotFound("source folder " + src + " does not exist");
  std::unique_ptr<FileTreeInput> in(new FileTreeInput(env, src, options.max_sample_bytes));
  SHARDPACK_RETURN_IF_ERROR(options.list_file.empty() ? ScanSourceTree(env, src, &in->tree_)
                                                      : ReadSourceList(env, options.list_file, &in->tree_));
  in->order_ = PackOrder(in->tree_.files.size(), options.shuffle, options.seed);
  if (options.path_keys) {
    std::vector<std::string> relpaths;
    relpaths.reserve(in->order_.size());
    for (uint32_t i : in->order_) relpaths.push_back(in->tree_.files[i].relpath);
    in->path_keys_ = UniquePathKeys(relpaths);
  }
  *input = std::move(in);
  return Status::OK();
}

Status FileTreeInput::Next(PackItem* item, bool* done) {
  *done = next_ >= order_.size();
  if (*done) return Status::OK();
  const SourceFile& f = tree_.files[order_[next_]];
  item->relpath = f.relpath;
  item->label = f.label;
  item->key = path_keys_.empty() ? std::string() : path_keys_[next_];
  item->extra = nullptr;
  item->loaded = false;
  ++next_;
  return Status::OK();
}

Status FileTreeInput::Load(PackItem* item) const {
  Status s = env_->ReadFile(JoinPath(src_, item->relpath), max_bytes_, &item->bytes);
  if (s.code() == Status::Code::kInvalidArgument) {
    return Status::InvalidArgument("file is larger than --max-sample-bytes (" + std::to_string(max_bytes_) + " bytes)");
  }
  return s;
}

}  // namespace shardpack
