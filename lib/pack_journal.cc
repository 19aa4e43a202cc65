#include "lib/pack_journal.h"

namespace shardpack {

Status WritePackJournal(Env* env, const std::string& out, const PackJournal& journal, bool sync) {
  nlohmann::json j = ManifestToJson(journal.progress);
  j["resume"] = {{"input_position", journal.input_position}, {"fingerprint", journal.fingerprint}};
  const std::string path = JoinPath(out, kPackJournalFileName);
  const std::string text = j.dump(1) + "\n";
  if (sync) {
    SHARDPACK_RETURN_IF_ERROR(WriteFileAtomically(env, path, text));
    return env->SyncDir(out);
  }
  // Without sync the rename still makes the update atomic for a killed process (the page cache
  // survives it); only a machine crash could lose it, which --no-sync accepts.
  std::unique_ptr<WritableFile> file;
  const std::string tmp = path + ".tmp";
  SHARDPACK_RETURN_IF_ERROR(env->NewWritableFile(tmp, &file));
  SHARDPACK_RETURN_IF_ERROR(file->Append(text));
  SHARDPACK_RETURN_IF_ERROR(file->Close());
  return env->RenameFile(tmp, path);
}

Status ReadPackJournal(Env* env, const std::string& out, PackJournal* journal) {
  const std::string path = JoinPath(out, kPackJournalFileName);
  if (!env->FileExists(path)) return Status::NotFound(path + " does not exist");
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(env->ReadFile(path, uint64_t(1) << 30, &text));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto bad = [&](const std::string& why) {
    return Status::DataLoss(path + ": " + why + "; rerun with --force instead of --resume to start over");
  };
  if (j.is_discarded() || !j.is_object()) return bad("not valid JSON");
  Status s = ManifestFromJson(j, &journal->progress);
  if (!s.ok()) return bad(s.message());
  const auto resume = j.find("resume");
  if (resume == j.end() || !resume->is_object() || !resume->contains("input_position") ||
      !(*resume)["input_position"].is_number_unsigned() || !resume->contains("fingerprint")) {
    return bad("no valid \"resume\" object");
  }
  journal->input_position = (*resume)["input_position"].get<uint64_t>();
  journal->fingerprint = (*resume)["fingerprint"];
  return Status::OK();
}

}  // namespace shardpack
