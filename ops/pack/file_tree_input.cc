#include "ops/pack/file_tree_input.h"

#include <numeric>
#include <random>

#include "ground/sample_keys.h"
#include "ops/pack/source_list.h"

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
  if (!options.list_file.empty() && options.layout != SourceLayout::kImageNet) {
    return Status::InvalidArgument("--layout applies to a scanned SRC; a --list names its samples itself");
  }
  std::unique_ptr<FileTreeInput> in(new FileTreeInput(env, src, options.max_sample_bytes));
  SHARDPACK_RETURN_IF_ERROR(options.list_file.empty() ? ScanSourceTree(env, src, options.layout, &in->tree_)
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
  item->fields.resize(keep_fields_ ? f.fields.size() : 0);
  item->field_relpaths.resize(item->fields.size());
  for (size_t i = 0; i < item->fields.size(); ++i) {
    item->fields[i].name = f.fields[i].name;
    item->fields[i].data = f.fields[i].value;
    item->field_relpaths[i] = f.fields[i].relpath;
  }
  ++next_;
  return Status::OK();
}

std::vector<SkippedFile> FileTreeInput::initial_skips() const {
  std::vector<SkippedFile> skips = tree_.skipped;
  if (keep_fields_) return skips;
  for (const SourceFile& f : tree_.files) {
    for (const SourceField& field : f.fields) {
      const std::string what = field.relpath.empty() ? f.relpath + " (field " + field.name + ")" : field.relpath;
      skips.push_back({what, kFieldsNotStored});
    }
  }
  return skips;
}

// Reads the image, then its fields from the files Next() named.
Status FileTreeInput::Load(PackItem* item) const {
  const auto read = [&](const std::string& relpath, std::string* bytes) {
    Status s = env_->ReadFile(JoinPath(src_, relpath), max_bytes_, bytes);
    if (s.code() == Status::Code::kInvalidArgument) {
      return Status::InvalidArgument((relpath == item->relpath ? std::string("file") : relpath) +
                                     " is larger than --max-sample-bytes (" + std::to_string(max_bytes_) + " bytes)");
    }
    return s.ok() || relpath == item->relpath ? s : s.WithPrefix(relpath + ": ");
  };
  SHARDPACK_RETURN_IF_ERROR(read(item->relpath, &item->bytes));
  for (size_t i = 0; i < item->fields.size(); ++i) {
    if (item->field_relpaths[i].empty()) continue;  // an inline value, which Next() gave
    SHARDPACK_RETURN_IF_ERROR(read(item->field_relpaths[i], &item->fields[i].data));
  }
  return Status::OK();
}

}  // namespace shardpack
