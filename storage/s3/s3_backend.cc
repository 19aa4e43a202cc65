#include "storage/s3/s3_backend.h"

#include "storage/http/http_backend.h"
#include "storage/s3/object_store_output_env.h"
#include "storage/s3/s3_object_store.h"

namespace shardpack {
namespace {

class S3StorageBackend final : public StorageBackend {
 public:
  const char* scheme() const override { return "s3"; }

  Status CheckLocation(const Location& location) const override { return CheckS3Location(location.text); }

  Status ClientUrl(const std::string& url, const RemoteOptions& options, std::string* client_url) const override {
    S3Location location;
    SHARDPACK_RETURN_IF_ERROR(ParseS3Location(url, options.s3, &location));
    *client_url = S3KeyUrl(location, location.prefix);
    return Status::OK();
  }

  Status PrepareClient(const Location& location, const RemoteOptions& options, HttpOptions* http) const override {
    const RemoteOptions::S3& s3 = options.s3;
    if (s3.access_key_id.empty() || s3.secret_access_key.empty()) {
      return Status::InvalidArgument(location.shown +
                                     " needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
                                     "AWS_SESSION_TOKEN for temporary ones; AWS_ENDPOINT_URL for a store other "
                                     "than AWS)");
    }
    http->aws.region = s3.region.empty() ? "us-east-1" : s3.region;
    http->aws.access_key_id = s3.access_key_id;
    http->aws.secret_access_key = s3.secret_access_key;
    http->aws.session_token = s3.session_token;
    return Status::OK();
  }

  std::unique_ptr<HttpClient> NewClient(const HttpOptions& http) const override { return NewCurlHttpClient(http); }

  Status NewOutputEnv(const Location& out, const RemoteOptions& options, Env* base, const UploadOrderOf& order,
                      std::unique_ptr<Env>* env) const override {
    ObjectStoreOutputOptions o;
    const RemoteOptions::S3& s3 = options.s3;
    if (s3.part_size > 0) o.part_size = s3.part_size;
    if (s3.uploads > 0) o.uploads = s3.uploads;
    if (!s3.staging_parent.empty()) o.staging_parent = s3.staging_parent;
    o.s3 = s3;
    S3Location where;  // the output's own checks come first, then the credentials'
    SHARDPACK_RETURN_IF_ERROR(CheckObjectStoreOutput(out.text, s3, &where));
    o.http = HttpOptionsFor(options);
    SHARDPACK_RETURN_IF_ERROR(PrepareClient(out, options, &o.http));
    o.upload_order = order;
    return NewObjectStoreOutputEnv(out.text, base, o, env);
  }
};

}  // namespace

const StorageBackend* S3Backend() {
  static const S3StorageBackend backend;
  return &backend;
}

}  // namespace shardpack
