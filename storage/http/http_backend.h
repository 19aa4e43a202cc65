// http:// and https://: a dataset folder served by any web server, read with plain GETs (libcurl).
#pragma once

#include "shardpack/remote_options.h"
#include "storage/http/http_client.h"
#include "storage/storage_backend.h"

namespace shardpack {

const StorageBackend* HttpBackend();
const StorageBackend* HttpsBackend();

// The client's options: HttpOptions' defaults with what the user set in `options.http` over them.
HttpOptions HttpOptionsFor(const RemoteOptions& options);

}  // namespace shardpack
