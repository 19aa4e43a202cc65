#include "formats/wds/wds_input.h"

#include <algorithm>

#include "formats/wds/wds_naming.h"
#include "ground/checksum.h"
#include "ground/sample_keys.h"

namespace shardpack {

WdsInput::WdsInput(Env* env, std::vector<std::string> shard_paths, std::vector<std::string> classes, uint64_t expected,
                   bool own_format, uint64_t max_member_bytes)
    : env_(env),
      shard_paths_(std::move(shard_paths)),
      classes_(std::move(classes)),
      expected_(expected),
      own_format_(own_format),
      max_member_bytes_(max_member_bytes) {}

WdsInput::~WdsInput() = default;

Status WdsInput::NextMember(Member* m, bool* end) {
  for (;;) {
    if (!reader_) {
      if (shard_ >= shard_paths_.size()) {
        *end = true;
        return Status::OK();
      }
      SHARDPACK_RETURN_IF_ERROR(TarShardReader::Open(env_, shard_paths_[shard_], &reader_));
      done_keys_.clear();
    }
    TarMember t;
    bool shard_done = false;
    SHARDPACK_RETURN_IF_ERROR(reader_->Next(&t, &shard_done));
    const std::string& shard = shard_paths_[shard_];
    if (shard_done) {
      reader_.reset();
      ++shard_;
      *end = false;
      m->name.clear();  // marks a shard boundary: the sample in progress ends here
      return Status::OK();
    }
    if (t.directory) continue;
    if (!t.regular) {
      return Status::DataLoss(shard + ": member '" + t.name + "' is a link or special file; refusing it");
    }
    if (IsUnsafeMemberName(t.name)) {
      return Status::DataLoss(shard + ": member '" + t.name + "' has an absolute or '..' path; refusing it");
    }
    if (!SplitWdsMemberName(t.name, &m->key, &m->ext)) continue;  // no extension, or a hidden file
    m->name = t.name;
    m->shard = shard_;
    m->data.clear();
    const std::string ext_lower = LowerExtension(m->ext);
    if (keep_fields_ || WdsImageFormat(ext_lower) != ImageFormat::kUnknown || ext_lower == "cls" ||
        ext_lower == "json" || ext_lower == "txt") {
      SHARDPACK_RETURN_IF_ERROR(reader_->ReadData(max_member_bytes_, &m->data));
    }
    *end = false;
    return Status::OK();
  }
}

std::string WdsInput::OutputKey(const std::string& key) {
  std::string out;
  for (char c : key) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    out += keep ? c : '_';
  }
  if (out.empty()) out = "_";
  if (out.size() > kMaxKeyLength - 8) out = out.substr(0, kMaxKeyLength - 8 - 17) + "_" + ChecksumHex(Xxh64(key));
  std::string candidate = out;
  for (uint64_t n = 2; !used_keys_.insert(Xxh64(candidate)).second; ++n) candidate = out + "_" + std::to_string(n);
  return candidate;
}

// The metadata member of a shardpack sample: "meta.json" when the sample has one, else "json"
// (formats/wds/wds_naming.h). In shards without a manifest only "meta.json" is taken for it (it is
// shardpack's, and the output gets its own); a "json" there is the sample's.
const WdsInput::Member* WdsInput::MetadataMember(const std::vector<Member>& members) const {
  const Member* json = nullptr;
  for (const Member& m : members) {
    if (m.ext == kWdsMetaJsonField) return &m;
    if (m.ext == "json") json = &m;
  }
  return own_format_ ? json : nullptr;
}

void WdsInput::Emit(std::vector<Member>& members, PackItem* item) {
  const std::string shard = BaseName(shard_paths_[members.front().shard]);
  const std::string& key = members.front().key;
  item->relpath = shard + ":" + key;
  item->label = -1;
  item->extra = nullptr;
  item->loaded = true;
  item->bytes.clear();
  item->fields.clear();
  item->field_relpaths.clear();
  const Member* metadata = MetadataMember(members);
  nlohmann::json json_field, txt_field;
  const Member* image = nullptr;
  for (Member& m : members) {
    const std::string ext = LowerExtension(m.ext);
    if (WdsImageFormat(ext) != ImageFormat::kUnknown && (image == nullptr || keep_fields_)) {
      if (image != nullptr) {
        item->status = Status::Corrupt("sample has two images (" + image->name + ", " + m.name +
                                       "); shardpack keeps one image per sample");
        return;
      }
      image = &m;
      item->bytes.swap(m.data);
    } else if (ext == "cls" && ParseClsField(m.data, &item->label)) {
      // The sample's label. A .cls that holds no integer ("tabby") is one of its files: kept as a
      // field below where the output keeps fields, not lost.
    } else if (&m == metadata) {
      if (own_format_) json_field = nlohmann::json::parse(m.data, nullptr, false);
    } else if (keep_fields_) {
      std::string problem = FieldNameProblem(m.ext);
      if (problem.empty() && m.ext == kWdsMetaJsonField)
        problem = "field name 'meta.json' is reserved for shardpack's metadata";
      for (const SampleField& f : item->fields) {
        if (f.name == m.ext) problem = "member " + m.name + " appears twice in the sample";
      }
      if (!problem.empty()) {
        item->status = Status::Corrupt(problem + "; the sample is not converted");
        return;
      }
      item->fields.push_back({m.ext, std::move(m.data)});
    } else if (ext == "json") {
      json_field = nlohmann::json::parse(m.data, nullptr, false);
      if (json_field.is_discarded()) json_field = m.data;
    } else if (ext == "txt") {
      txt_field = m.data;
    }
  }
  std::sort(item->fields.begin(), item->fields.end(),
            [](const SampleField& a, const SampleField& b) { return a.name < b.name; });
  if (own_format_) {
    item->key = key;
    if (json_field.is_object() && json_field.contains("path") && json_field["path"].is_string()) {
      item->relpath = json_field["path"].get<std::string>();
    }
  } else {
    // Without fields kept, a third-party sample's caption and annotations go into the metadata.
    item->key = OutputKey(key);
    nlohmann::json extra = {{"shard", shard}, {"key", key}};
    if (!json_field.is_null()) extra["json"] = json_field;
    if (!txt_field.is_null()) extra["txt"] = txt_field;
    item->extra = std::move(extra);
  }
  if (image == nullptr) item->status = Status::Corrupt("sample has no image member (jpg, jpeg, png, webp, bmp)");
}

Status WdsInput::NotAdjacent(const Member& m) const {
  return Status::DataLoss(shard_paths_[m.shard] + ": member '" + m.name + "' belongs to sample '" + m.key +
                          "', whose members are not adjacent; write shards with the members of a sample "
                          "together (tar --sort=name, webdataset's TarWriter)");
}

Status WdsInput::Next(PackItem* item, bool* done) {
  std::vector<Member> members;
  if (have_pending_) {
    members.push_back(std::move(pending_));
    have_pending_ = false;
  }
  for (;;) {
    Member m;
    bool end = false;
    SHARDPACK_RETURN_IF_ERROR(NextMember(&m, &end));
    if (end || m.name.empty()) {  // end of everything, or of a shard: the sample ends here
      if (!members.empty()) {
        done_keys_.clear();
        Emit(members, item);
        *done = false;
        return Status::OK();
      }
      if (end) {
        *done = true;
        return Status::OK();
      }
      continue;
    }
    if (!members.empty() && m.key != members.front().key) {
      done_keys_.insert(members.front().key);
      if (done_keys_.count(m.key)) return NotAdjacent(m);
      pending_ = std::move(m);
      have_pending_ = true;
      Emit(members, item);
      *done = false;
      return Status::OK();
    }
    if (members.empty() && done_keys_.count(m.key)) return NotAdjacent(m);
    members.push_back(std::move(m));
  }
}

}  // namespace shardpack
