#include "formats/tfrecord/tfrecord_input.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "formats/common/bytes_json.h"
#include "formats/tfrecord/tf_example.h"
#include "ground/printable.h"

namespace shardpack {
namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool TfRecordName(const std::string& name) {
  for (const char* ext : {".tfrecord", ".tfrecords", ".tfrec"}) {
    if (EndsWith(name, ext) || EndsWith(name, std::string(ext) + ".gz")) return true;
  }
  return false;
}

// Whether the file's first 12 bytes frame a record (a file without a telling name).
bool HeadFrames(Env* env, const std::string& path) {
  std::unique_ptr<RandomAccessFile> file;
  char head[12];
  return env->NewRandomAccessFile(path, &file).ok() && file->Read(0, sizeof(head), head).ok() &&
         LooksLikeTfRecord(std::string_view(head, sizeof(head)));
}

// A feature's values as JSON: one value as itself, several as an array.
nlohmann::json FeatureJson(const TfFeature& f) {
  nlohmann::json values = nlohmann::json::array();
  for (const std::string_view b : f.bytes) values.push_back(BytesJson(b));
  for (const float v : f.floats) values.push_back(v);
  for (const int64_t v : f.ints) values.push_back(v);
  return values.size() == 1 ? values[0] : values;
}

}  // namespace

Status TfRecordInput::Open(Env* env, const std::string& path, uint64_t max_member_bytes,
                           std::unique_ptr<PackInput>* input) {
  std::vector<std::string> files;
  std::vector<DirEntry> entries;
  if (env->ListDir(path, &entries).ok()) {
    std::sort(entries.begin(), entries.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    for (const DirEntry& e : entries) {
      if (e.type != DirEntry::Type::kFile || e.name.empty() || e.name[0] == '.') continue;
      const std::string file = JoinPath(path, e.name);
      if (TfRecordName(e.name) || HeadFrames(env, file)) files.push_back(file);
    }
    if (files.empty()) return Status::NotFound(path + " holds no TFRecord files");
  } else if (env->FileExists(path) && (TfRecordName(path) || HeadFrames(env, path))) {
    files.push_back(path);
  } else {
    return Status::NotFound(path + " is not a TFRecord file");
  }
  input->reset(new TfRecordInput(env, std::move(files), max_member_bytes));
  return Status::OK();
}

void TfRecordInput::Skip(const std::string& where, Status why, PackItem* item) {
  item->relpath = where;
  item->loaded = true;
  item->bytes.clear();
  item->fields.clear();
  item->extra = nullptr;
  item->status = std::move(why);
}

Status TfRecordInput::Next(PackItem* item, bool* done) {
  *done = false;
  item->status = Status::OK();
  while (file_ < files_.size()) {
    const std::string& path = files_[file_];
    if (reader_ == nullptr) {
      const Status read = ReadTfRecordFile(env_, path, kMaxTfRecordFileBytes, &contents_);
      if (!read.ok()) {
        ++file_;
        Skip(path, read, item);  // the whole file: reported, and the others go on
        return Status::OK();
      }
      reader_ = std::make_unique<TfRecordReader>(contents_.bytes(), path);
    }
    std::string_view record;
    std::string damaged;
    bool end = false;
    const Status framed = reader_->Next(&record, &damaged, &end);
    if (!framed.ok() || end) {
      const uint64_t records = reader_->records();
      reader_.reset();
      contents_.Clear();
      ++file_;
      if (framed.ok()) continue;
      Skip(path + "#" + std::to_string(records), framed.WithMessage(framed.message() + "; its later records are lost"),
           item);
      return Status::OK();
    }
    const std::string where = path + "#" + std::to_string(reader_->records() - 1);
    if (!damaged.empty()) {
      Skip(where, Status::Corrupt(damaged), item);
      return Status::OK();
    }
    item->relpath = where;
    Emit(record, item);
    return Status::OK();
  }
  *done = true;
  return Status::OK();
}

void TfRecordInput::Emit(std::string_view record, PackItem* item) {
  item->label = -1;
  item->key.clear();  // the pipeline's index key
  item->loaded = true;
  item->bytes.clear();
  item->fields.clear();
  item->field_relpaths.clear();
  item->extra = nullptr;
  std::map<std::string, TfFeature> features;
  std::string why;
  if (!ParseTfExample(record, &features, &why)) {
    item->status = Status::Corrupt("not a tf.train.Example: " + why);
    return;
  }
  const auto image = features.find("image/encoded");
  if (image == features.end() || image->second.kind != TfFeature::Kind::kBytes || image->second.bytes.size() != 1) {
    std::string names;
    for (const auto& [name, f] : features) names += (names.empty() ? "" : ", ") + Printable(name);
    item->status = Status::Corrupt(
        "no image: the Example has no bytes feature image/encoded of one value (its "
        "features: " +
        (names.empty() ? std::string("none") : names) + ")");
    return;
  }
  if (image->second.bytes[0].size() > max_member_bytes_) {
    item->status = Status::Corrupt("its image of " + std::to_string(image->second.bytes[0].size()) +
                                   " bytes is over the bound of " + std::to_string(max_member_bytes_));
    return;
  }
  item->bytes.assign(image->second.bytes[0]);
  nlohmann::json others = nlohmann::json::object();
  for (const auto& [name, f] : features) {
    if (name == "image/encoded") continue;
    if (name == "image/class/label" && f.kind == TfFeature::Kind::kInt64 && !f.ints.empty()) {
      if (f.ints[0] < 0 || f.ints[0] > INT32_MAX) {
        item->status =
            Status::Corrupt("image/class/label " + std::to_string(f.ints[0]) + " is not a label from 0 to 2^31 - 1");
        return;
      }
      item->label = int32_t(f.ints[0]);
      continue;
    }
    others[name] = FeatureJson(f);
  }
  if (others.empty()) return;
  if (keep_fields_) {
    item->fields.push_back({"json", others.dump()});
  } else {
    item->extra = {{"tfrecord", std::move(others)}};
  }
}

}  // namespace shardpack
