#include "ops/read/opened_dataset.h"

#include "formats/registry/registry.h"
#include "ground/manifest_json.h"
#include "storage/remote_dataset.h"

namespace shardpack {
namespace {

// A URL without a cache folder: the manifest and small files into memory, shards as they are read.
Status OpenStreamedDataset(const Location& location, Env* env, const RemoteAccess& access, OpenedDataset* dataset) {
  const auto new_client = access.new_client;
  std::unique_ptr<HttpClient> http = new_client();
  RemoteManifest remote;
  SHARDPACK_RETURN_IF_ERROR(FetchRemoteManifest(access.url, http.get(), &remote));
  SHARDPACK_RETURN_IF_ERROR(FindFormatOf(location.text, remote.manifest, &dataset->format));
  if (!dataset->format->reads_shards_through_env()) {
    return Status::InvalidArgument("reading " + location.text + " needs a local cache folder (the " +
                                   std::string(dataset->format->name()) + " format is one file, read at random): set " +
                                   kCacheEnvVar + "=DIR with room for the dataset");
  }
  SHARDPACK_RETURN_IF_ERROR(StreamedDatasetEnv::Open(env, remote, new_client, &dataset->streamed));
  dataset->dir = remote.base;
  dataset->manifest = std::move(remote.manifest);
  dataset->env = dataset->streamed.get();
  return Status::OK();
}

// The base of `view` into *dataset, checked to be the dataset the view was made from.
Status OpenViewBase(std::shared_ptr<const OpenedView> view, const RemoteOptions& remote, Env* env,
                    OpenedDataset* dataset) {
  Location base;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(ViewBaseLocation(*view), &base));
  const std::string prefix = "the base of view " + view->shown + ": ";
  SHARDPACK_RETURN_IF_ERROR(
      OpenDataset(base, remote, env, dataset, /*check_manifest=*/true, /*open_view_base=*/false).WithPrefix(prefix));
  if (dataset->view != nullptr) {
    return Status::InvalidArgument(prefix + base.shown + " is a view itself: a view's base is a packed dataset");
  }
  std::vector<uint64_t> counts;
  for (const ShardEntry& e : dataset->manifest.shards) counts.push_back(e.samples);
  const std::vector<ShardEntry>& shards = dataset->manifest.shards;
  SHARDPACK_RETURN_IF_ERROR(CheckViewBase(
      view->manifest, view->shown, dataset->manifest, counts,
      [&](size_t i) { return std::string_view(shards[i].xxh64); }, base.shown, &dataset->view_base_newer));
  dataset->view = std::move(view);
  return Status::OK();
}

}  // namespace

std::string ViewBaseLocation(const OpenedView& view) { return LocationFrom(view.dir, view.manifest.base); }

Status OpenDataset(const Location& location, const RemoteOptions& remote, Env* env, OpenedDataset* dataset,
                   bool check_manifest, bool open_view_base) {
  dataset->env = env;
  if (location.remote()) {
    RemoteAccess access;
    SHARDPACK_RETURN_IF_ERROR(PrepareRemoteAccess(location, remote, &access));
    if (access.cache_dir.empty()) return OpenStreamedDataset(location, env, access, dataset);
  }
  SHARDPACK_RETURN_IF_ERROR(ResolveDatasetLocation(location, remote, env, &dataset->dir));
  // A folder another tool indexed its own way (MDS's index.json) is read in place.
  if (!location.remote() && !env->FileExists(JoinPath(dataset->dir, kManifestFileName)) &&
      !env->FileExists(JoinPath(dataset->dir, kPackJournalFileName))) {
    const Status foreign = OpenForeignDataset(env, dataset->dir, &dataset->manifest, &dataset->format);
    if (foreign.code() != Status::Code::kNotFound) {
      dataset->foreign_index = foreign.ok();
      return foreign;
    }
  }
  auto view = std::make_shared<OpenedView>();
  bool is_view = false;
  SHARDPACK_RETURN_IF_ERROR(
      ReadManifestOrView(env, dataset->dir, check_manifest, &dataset->manifest, &view->manifest, &is_view));
  if (is_view) {
    view->dir = dataset->dir;
    view->shown = location.shown;
    view->env = env;
    if (!open_view_base) {
      dataset->view = std::move(view);
      return Status::OK();
    }
    return OpenViewBase(std::move(view), remote, env, dataset);
  }
  return FindFormatOf(dataset->dir, dataset->manifest, &dataset->format);
}

size_t OpenedDataset::shard_count() const {
  return view != nullptr ? view->manifest.shards.size() : manifest.shards.size();
}

uint64_t OpenedDataset::samples() const { return view != nullptr ? view->manifest.samples : manifest.samples; }

std::string OpenedDataset::shard_file(size_t shard) const {
  return manifest.shards[view != nullptr ? view->manifest.shards[shard].base_shard : shard].file;
}

namespace {

// Shard `shard` of a view: its base shard's rows (records or sizes), read by read(base, &all), then
// the selected ones in the selection's order.
template <typename Row, typename ReadAll>
Status ReadSelectedRows(const OpenedDataset& d, size_t shard, ReadAll read, std::vector<Row>* rows) {
  const ViewShard& selected = d.view->manifest.shards[shard];
  const ShardEntry& base = d.manifest.shards[selected.base_shard];
  std::vector<uint32_t> positions;
  SHARDPACK_RETURN_IF_ERROR(ReadSelection(d.view->env, d.view->dir, selected, base.samples, &positions));
  std::vector<Row> all;
  SHARDPACK_RETURN_IF_ERROR(read(base, &all));
  if (all.size() != base.samples) {
    return Status::DataLoss(JoinPath(d.dir, base.file) + ": its sample table lists " + std::to_string(all.size()) +
                            " samples, the manifest " + std::to_string(base.samples) + "; run shardpack verify");
  }
  rows->clear();
  rows->reserve(positions.size());
  for (uint32_t p : positions) rows->push_back(std::move(all[p]));
  return Status::OK();
}

}  // namespace

Status OpenedDataset::ReadSampleRecords(size_t shard, std::vector<SampleRecord>* records) const {
  if (view == nullptr) return format->ReadSampleRecords(env, dir, manifest.shards[shard], records);
  SHARDPACK_RETURN_IF_ERROR(ReadSelectedRows(
      *this, shard,
      [&](const ShardEntry& base, std::vector<SampleRecord>* all) {
        return format->ReadSampleRecords(env, dir, base, all);
      },
      records));
  for (SampleRecord& r : *records) r.label = ViewLabel(view->manifest, r.label);
  return Status::OK();
}

const std::vector<std::string>& OpenedDataset::classes() const {
  return view != nullptr && !view->manifest.base_labels.empty() ? view->manifest.classes : manifest.classes;
}

Status OpenedDataset::ReadShownSizes(size_t shard, std::vector<ShownSize>* sizes) const {
  if (view == nullptr) return format->ReadShownSizes(env, dir, manifest.shards[shard], sizes);
  return ReadSelectedRows(
      *this, shard,
      [&](const ShardEntry& base, std::vector<ShownSize>* all) { return format->ReadShownSizes(env, dir, base, all); },
      sizes);
}

Status FindForeignShards(const Location& location, const RemoteOptions& remote, Env* env,
                         std::vector<std::string>* paths) {
  paths->clear();
  if (location.shard_list) return ResolveShardList(location, remote, env, paths);
  if (!location.local()) return Status::OK();
  const std::string& dir = location.text;
  if (env->FileExists(JoinPath(dir, kManifestFileName)) || env->FileExists(JoinPath(dir, kPackJournalFileName))) {
    return Status::OK();
  }
  // Not a folder: nothing found here (opening it as a dataset says what the location is).
  std::vector<DirEntry> entries;
  if (!env->ListDir(dir, &entries).ok()) return Status::OK();
  // Shards with shardpack's sample tables beside them are a packed dataset that lost its manifest,
  // not shards of another tool: opening it says so, and what to do.
  for (const DirEntry& e : entries) {
    if (EndsWith(e.name, ".samples.tsv")) return Status::OK();
  }
  if (!ShardListFormat().ListShardFiles(env, dir, paths).ok()) paths->clear();
  return Status::OK();
}

Status OpenDatasetAt(const std::string& location, const RemoteOptions& remote, Env* env, OpenedDataset* dataset) {
  Location parsed;
  SHARDPACK_RETURN_IF_ERROR(ParseLocation(location, &parsed));
  return OpenDataset(parsed, remote, env != nullptr ? env : Env::Default(), dataset);
}

}  // namespace shardpack
