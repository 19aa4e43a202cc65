#include <malloc.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "ground/checksum.h"
#include "ground/json_integer.h"
#include "ground/manifest_json.h"
#include "ground/view_manifest.h"

namespace shardpack {
namespace {

using nlohmann::json;

json SideFileToJson(const SideFile& f) { return json{{"file", f.file}, {"xxh64", f.xxh64}}; }

void SideFileFromJson(const json& j, SideFile* f) {
  f->file = j.at("file").get<std::string>();
  f->xxh64 = j.at("xxh64").get<std::string>();
}

// A count, size or version: an integer from 0 to `max`.
uint64_t UnsignedAt(const json& j, const char* key, uint64_t max = UINT64_MAX) {
  const json& v = j.at(key);
  if (!IsJsonIntegerIn(v, 0, max)) {
    throw std::invalid_argument(std::string("\"") + key + "\" is " + v.dump() + ", not an integer from 0 to " +
                                std::to_string(max));
  }
  return v.get<uint64_t>();
}

// The options are read back by the format readers and verifiers with json::value(), which throws
// on a wrong type and casts numbers plainly (undefined behaviour out of range). Pack writes every
// number as a non-negative integer, alone or in an array ("crop"); the two keys the readers take
// that are neither numbers nor arrays must have their types.
void CheckOptions(const json& options) {
  if (!options.is_object()) throw std::invalid_argument("\"options\" is not an object");
  for (const auto& [key, value] : options.items()) {
    const auto number_ok = [](const json& v) { return !v.is_number() || IsJsonIntegerIn(v, 0, UINT64_MAX); };
    const bool numbers_ok = value.is_array() ? std::all_of(value.begin(), value.end(), number_ok) : number_ok(value);
    if (!numbers_ok) {
      throw std::invalid_argument("option \"" + key + "\" is " + value.dump() + ", not made of non-negative integers");
    }
  }
  if (options.contains("compress") && !options["compress"].is_string()) {
    throw std::invalid_argument("option \"compress\" is not a string");
  }
  if (options.contains("keep_size") && !options["keep_size"].is_boolean()) {
    throw std::invalid_argument("option \"keep_size\" is not true or false");
  }
}

}  // namespace

nlohmann::json ManifestToJson(const Manifest& m) {
  json shardlist = json::array();
  for (const ShardEntry& s : m.shards) {
    // url and nsamples are the wids fields; the rest is ours.
    json entry{{"url", s.file}, {"nsamples", s.samples}, {"filesize", s.bytes}, {"xxh64", s.xxh64}};
    if (!s.index.file.empty()) entry["index"] = SideFileToJson(s.index);
    if (!s.sample_table.file.empty()) entry["sample_table"] = SideFileToJson(s.sample_table);
    if (!s.side_files.empty()) {
      entry["side_files"] = json::array();
      for (const SideFile& f : s.side_files) entry["side_files"].push_back(SideFileToJson(f));
    }
    if (!s.fields.empty()) entry["fields"] = s.fields;
    shardlist.push_back(std::move(entry));
  }
  const std::map<std::string, uint64_t> fields = FieldCounts(m);
  json skipped = json::array();
  for (const SkippedFile& f : m.skipped) skipped.push_back(json{{"path", f.path}, {"reason", f.reason}});
  json j{{"name", m.name},
         {"shardpack_manifest_version", kManifestVersion},
         {"shardpack_version", m.tool_version},
         {"format", std::string(DatasetFormatName(m.format))},
         {"format_version", m.format_version},
         {"samples", m.samples},
         {"bytes", m.bytes},
         {"classes", m.classes},
         {"empty_classes", m.empty_classes},
         {"options", json::parse(m.options_json, nullptr, /*allow_exceptions=*/false)},
         {"shardlist", shardlist},
         {"skipped", skipped}};
  if (!fields.empty()) j["fields"] = fields;  // written only when there are some: older manifests stay as they were
  if (m.generation > 0) j["generation"] = m.generation;  // likewise: a dataset never appended to has none
  if (!m.last_append_fingerprint.empty()) {
    j["last_append"] = {{"source", m.last_append_source}, {"fingerprint", m.last_append_fingerprint}};
  }
  if (m.wids_shard_list) {
    j["__kind__"] = "wids-shard-index-v1";
    j["wids_version"] = 1;
  }
  return j;
}

Status ManifestFromJson(const nlohmann::json& j, Manifest* m) {
  *m = Manifest();
  try {
    const int version = int(UnsignedAt(j, "shardpack_manifest_version", INT_MAX));
    if (version != kManifestVersion) {
      return Status::Unsupported("manifest version " + std::to_string(version) +
                                 " is not supported by this shardpack (it reads version " +
                                 std::to_string(kManifestVersion) + ")");
    }
    m->name = j.value("name", "");
    m->tool_version = j.value("shardpack_version", "");
    const std::string format = j.at("format").get<std::string>();
    if (!ParseDatasetFormat(format, &m->format).ok()) {
      return Status::Unsupported("format '" + format + "' cannot be read by this version (it reads " +
                                 DatasetFormatNames(" and ") + ")");
    }
    m->format_version = int(UnsignedAt(j, "format_version", INT_MAX));
    m->samples = UnsignedAt(j, "samples");
    m->bytes = UnsignedAt(j, "bytes");
    m->classes = j.at("classes").get<std::vector<std::string>>();
    m->empty_classes = j.value("empty_classes", std::vector<std::string>());
    m->generation = j.contains("generation") ? UnsignedAt(j, "generation") : 0;
    if (j.contains("last_append")) {
      m->last_append_source = j.at("last_append").at("source").get<std::string>();
      m->last_append_fingerprint = j.at("last_append").at("fingerprint").get<std::string>();
    }
    const json options = j.value("options", json::object());
    CheckOptions(options);
    m->options_json = options.dump();
    m->wids_shard_list = j.contains("wids_version");
    for (const json& s : j.at("shardlist")) {
      ShardEntry e;
      e.file = s.at("url").get<std::string>();
      e.samples = UnsignedAt(s, "nsamples");
      e.bytes = UnsignedAt(s, "filesize");
      e.xxh64 = s.at("xxh64").get<std::string>();
      if (s.contains("index")) SideFileFromJson(s.at("index"), &e.index);
      if (s.contains("sample_table")) SideFileFromJson(s.at("sample_table"), &e.sample_table);
      for (const json& f : s.value("side_files", json::array())) {
        e.side_files.emplace_back();
        SideFileFromJson(f, &e.side_files.back());
      }
      const json fields = s.value("fields", json::object());
      if (!fields.is_object()) throw std::invalid_argument("\"fields\" of " + e.file + " is not an object");
      for (const auto& item : fields.items()) e.fields[item.key()] = UnsignedAt(fields, item.key().c_str(), e.samples);
      m->shards.push_back(std::move(e));
    }
    for (const json& f : j.value("skipped", json::array())) {
      m->skipped.push_back({f.at("path").get<std::string>(), f.at("reason").get<std::string>()});
    }
  } catch (const std::exception& e) {  // nlohmann's (missing key, wrong type) and UnsignedAt's
    return Status::DataLoss(std::string("manifest is malformed: ") + e.what());
  }
  return Status::OK();
}

std::map<std::string, uint64_t> FieldCounts(const Manifest& manifest) {
  std::map<std::string, uint64_t> total;
  for (const ShardEntry& shard : manifest.shards) {
    for (const auto& [field, count] : shard.fields) total[field] += count;
  }
  return total;
}

Status ManifestOptions(const ManifestHeader& manifest, nlohmann::json* options) {
  *options = json::parse(manifest.options_json, nullptr, /*allow_exceptions=*/false);
  if (!options->is_object()) {
    return Status::DataLoss("the manifest's options are not a JSON object: " + manifest.options_json);
  }
  return Status::OK();
}

namespace {

// A manifest of 100,000 shards parses into a few KB of small JSON nodes a shard, all freed once it
// is read; glibc keeps freed pieces that small for reuse instead of returning them, so every rank
// would go on holding a few hundred MB it never uses again (issue 39: RssAnon grew by 4.6 KB a
// shard, against 0.7 KB once returned). malloc_trim hands every free page back. But a page is free
// only when nothing on it is kept, and the shard entries' strings were allocated between the
// nodes: with `manifest`, its shard list is copied first, into memory allocated after the nodes
// were freed (and a vector of the exact size), so that the pages of the parse come free whole.
// Small manifests are not worth it.
constexpr size_t kTrimAfterBytes = size_t(1) << 20;
void ReturnFreedMemory(size_t parsed_bytes, Manifest* manifest = nullptr) {
  if (parsed_bytes < kTrimAfterBytes) return;
  if (manifest != nullptr) {
    std::vector<ShardEntry> packed(manifest->shards.begin(), manifest->shards.end());
    manifest->shards.swap(packed);
  }
  malloc_trim(0);
}

}  // namespace

// The manifest's checksum of itself: xxh64 of its JSON (2-space dump, keys sorted) without the
// checksum field. nlohmann's dump of what it parsed from our dump is the same text, so a reader
// recomputes it from the parsed object.
std::string SelfChecksum(nlohmann::json j) {
  j.erase(kManifestChecksumKey);
  return ChecksumHex(Xxh64(j.dump(2)));
}

Status CheckManifestChecksum(Env* env, const std::string& dir) {
  const std::string path = JoinPath(dir, kManifestFileName);
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(env->ReadFile(path, uint64_t(1) << 30, &text));
  return CheckManifestText(text, path);
}

// Checks the checksum a parsed manifest holds of itself, taking the field out of `j` to compute it
// (so no copy of a large manifest's tree is made).
Status CheckSelfChecksum(nlohmann::json* j, const std::string& path) {
  if (j->is_discarded() || !j->is_object()) return Status::DataLoss(path + " is not valid JSON");
  const auto stored = j->find(kManifestChecksumKey);
  // Every manifest of this version is written with its checksum: one without it was rewritten by
  // something else, and what it says (the class list, the options) can no longer be trusted.
  if (stored == j->end()) {
    return Status::DataLoss(path + " has no " + kManifestChecksumKey +
                            " field, which pack always writes: it was rewritten after pack; repack, or restore the "
                            "manifest pack wrote");
  }
  const std::string want = stored->is_string() ? stored->get<std::string>() : std::string();
  j->erase(kManifestChecksumKey);
  if (want.empty() || want != ChecksumHex(Xxh64(j->dump(2)))) {
    return Status::DataLoss(path + " was changed after pack wrote it (its " + kManifestChecksumKey +
                            " does not match its contents)");
  }
  return Status::OK();
}

Status CheckManifestText(const std::string& text, const std::string& path) {
  Status s;
  {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    s = CheckSelfChecksum(&j, path);
  }
  ReturnFreedMemory(text.size());
  return s;
}

Status WriteManifest(Env* env, const std::string& dir, const Manifest& manifest) {
  nlohmann::json j = ManifestToJson(manifest);
  j[kManifestChecksumKey] = SelfChecksum(j);
  std::string text = j.dump(2) + "\n";
  SHARDPACK_RETURN_IF_ERROR(WriteFileAtomically(env, JoinPath(dir, kManifestFileName), text));
  return env->SyncDir(dir);
}

namespace {

// The name of a file in `dir` named as TFRecord files are (*.tfrecord, *.tfrecords, *.tfrec, each
// perhaps .gz, or TF's "train-00000-of-01024"); empty when none. By name only: a hint for a message.
std::string ATfRecordFileIn(Env* env, const std::string& dir) {
  std::vector<DirEntry> entries;
  if (!env->ListDir(dir, &entries).ok()) return "";
  for (const DirEntry& e : entries) {
    std::string name = e.name;
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0) name.resize(name.size() - 3);
    const size_t dot = name.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : name.substr(dot);
    const size_t of = name.rfind("-of-");
    const bool sharded = of != std::string::npos && of >= 6 && of + 4 < name.size() &&
                         name.find_first_not_of("0123456789", of + 4) == std::string::npos &&
                         name.find_first_not_of("0123456789", of - 5) == of && name[of - 6] == '-';
    if (ext == ".tfrecord" || ext == ".tfrecords" || ext == ".tfrec" || sharded) return e.name;
  }
  return "";
}

// dir/manifest.json's text, or NotFound saying what the folder holds instead.
Status ReadManifestFile(Env* env, const std::string& dir, std::string* path, std::string* text) {
  *path = JoinPath(dir, kManifestFileName);
  if (!env->FileExists(*path)) {
    if (!env->FileExists(dir)) return Status::NotFound("dataset folder " + dir + " does not exist");
    // The journal a pack keeps until it publishes the manifest tells a killed pack from a folder
    // that never held a dataset, and the fix differs.
    if (env->FileExists(JoinPath(dir, kPackJournalFileName))) {
      return Status::NotFound(
          *path + " does not exist: " + dir +
          " holds an interrupted pack; rerun the same pack (or convert) command with --resume to finish it");
    }
    // TFRecord files have no index to read in place: convert says so, and so does this.
    if (const std::string tfrecord = ATfRecordFileIn(env, dir); !tfrecord.empty()) {
      return Status::NotFound(*path + " does not exist: " + dir + " holds TFRecord files (" + tfrecord +
                              "), which nothing indexes: convert them into a dataset first: shardpack convert " + dir +
                              " OUT (docs/formats/tfrecord.md)");
    }
    return Status::NotFound(*path + " does not exist: " + dir +
                            " is not a packed dataset, or its pack did not finish (rerun pack)");
  }
  return env->ReadFile(*path, uint64_t(1) << 30, text);
}

// One parse, for both the check of the manifest's checksum of itself (when `checked`) and the
// Manifest: a second parse of a large manifest leaves its freed nodes strewn among the pages the
// first one's survivors hold (measured at 100,000 shards: 34 MB more resident, 344 bytes a shard).
// view: where a view's manifest goes (*is_view set); nullptr: a view's is refused (NotAPackedDataset).
Status ParseManifest(const std::string& text, const std::string& path, bool checked, Manifest* manifest,
                     ViewManifest* view = nullptr, bool* is_view = nullptr) {
  Status s;
  {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Status::DataLoss(path + " is not valid JSON");
    if (IsViewJson(j)) {
      if (view == nullptr) return NotAPackedDataset(path, j);
      *is_view = true;
      return ParseViewManifest(std::move(j), path, view);
    }
    std::string self;
    if (j.is_object() && j.contains(kManifestChecksumKey) && j[kManifestChecksumKey].is_string()) {
      self = j[kManifestChecksumKey].get<std::string>();
    }
    if (checked) s = CheckSelfChecksum(&j, path);
    if (s.ok()) {
      s = ManifestFromJson(j, manifest);
      manifest->manifest_xxh64 = self;
      if (s.code() == Status::Code::kUnsupported) s = Status::Unsupported(path + ": " + s.message());
      if (!s.ok() && s.code() != Status::Code::kUnsupported) s = Status::DataLoss(path + ": " + s.message());
    }
  }
  ReturnFreedMemory(text.size(), s.ok() ? manifest : nullptr);
  return s;
}

}  // namespace

Status ReadManifest(Env* env, const std::string& dir, Manifest* manifest) {
  std::string path, text;
  SHARDPACK_RETURN_IF_ERROR(ReadManifestFile(env, dir, &path, &text));
  return ParseManifest(text, path, /*checked=*/false, manifest);
}

Status ReadCheckedManifest(Env* env, const std::string& dir, Manifest* manifest) {
  std::string path, text;
  SHARDPACK_RETURN_IF_ERROR(ReadManifestFile(env, dir, &path, &text));
  return ParseManifest(text, path, /*checked=*/true, manifest);
}

Status ReadManifestOrView(Env* env, const std::string& dir, bool checked, Manifest* manifest, ViewManifest* view,
                          bool* is_view) {
  *is_view = false;
  std::string path, text;
  SHARDPACK_RETURN_IF_ERROR(ReadManifestFile(env, dir, &path, &text));
  return ParseManifest(text, path, checked, manifest, view, is_view);
}

Status ParseManifestText(const std::string& text, const std::string& path, Manifest* manifest) {
  return ParseManifest(text, path, /*checked=*/false, manifest);
}

Status ParseCheckedManifestText(const std::string& text, const std::string& path, Manifest* manifest) {
  return ParseManifest(text, path, /*checked=*/true, manifest);
}

}  // namespace shardpack
