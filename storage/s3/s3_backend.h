// s3://BUCKET/PREFIX: AWS S3 and S3-compatible stores, read and written over the S3 API with signed
// requests (AWS Signature V4, done by libcurl).
#pragma once

#include "storage/storage_backend.h"

namespace shardpack {

const StorageBackend* S3Backend();

}  // namespace shardpack
