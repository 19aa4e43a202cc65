#include "ops/pack/output_env.h"

#include "ops/pack/pack_partition.h"
#include "shardpack/manifest.h"

namespace shardpack {

UploadOrder PackUploadOrder(const std::string& name) {
  uint32_t part = 0, parts = 0;
  bool writer = false;
  if (EndsWith(name, ".tmp")) return UploadOrder::kNotPublished;
  if (name == kManifestFileName || ParsePartManifestName(name, &part, &parts, &writer)) return UploadOrder::kLast;
  if (name == kPackJournalFileName || EndsWith(name, ".journal.json")) return UploadOrder::kAfterEarlier;
  return UploadOrder::kAny;
}

Status OutputEnvFor(const Location& out, const Format* format, const RemoteOptions& remote, Env* given,
                    std::unique_ptr<Env>* holder, Env** env) {
  *env = given != nullptr ? given : Env::Default();
  if (out.pipe()) return Status::InvalidArgument(out.shown + ": an output is a folder, not a pipe: command");
  if (!out.remote()) return Status::OK();
  if (format != nullptr && !format->writes_through_env()) {
    return Status::InvalidArgument("the " + std::string(format->name()) +
                                   " format cannot be written into an object store: its library writes one file in "
                                   "place; pack it into a local folder and upload that (aws s3 cp --recursive), "
                                   "or pack wds or raw into " +
                                   out.text);
  }
  const auto* own = dynamic_cast<const StoreOutputEnv*>(*env);
  if (own != nullptr && own->serves(out.text)) return Status::OK();
  SHARDPACK_RETURN_IF_ERROR(out.backend->NewOutputEnv(out, remote, *env, PackUploadOrder, holder));
  *env = holder->get();
  return Status::OK();
}

}  // namespace shardpack
