#include "ops/pack/pack_journal.h"

#include "ground/json_integer.h"
#include "ground/manifest_json.h"

namespace shardpack {

Status WritePackJournal(Env* env, const std::string& out, const PackJournal& journal, bool sync,
                        const std::string& name) {
  nlohmann::json j = ManifestToJson(journal.progress);
  j["resume"] = {{"input_position", journal.input_position}, {"fingerprint", journal.fingerprint}};
  const std::string path = JoinPath(out, name);
  const std::string text = j.dump(1) + "\n";
  SHARDPACK_RETURN_IF_ERROR(WriteFileAtomically(env, path, text, sync));
  return sync ? env->SyncDir(out) : Status::OK();
}

Status ReadPackJournal(Env* env, const std::string& out, PackJournal* journal, const std::string& name) {
  const std::string path = JoinPath(out, name);
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
      !IsJsonIntegerIn((*resume)["input_position"], 0, UINT64_MAX) || !resume->contains("fingerprint")) {
    return bad("no valid \"resume\" object");
  }
  journal->input_position = (*resume)["input_position"].get<uint64_t>();
  journal->fingerprint = (*resume)["fingerprint"];
  return Status::OK();
}

}  // namespace shardpack
