// The table of storage backends: the only code that names every one (as formats/registry/ does for
// formats).
#include <vector>

#include "storage/http/http_backend.h"
#include "storage/s3/s3_backend.h"
#include "storage/storage_backend.h"

namespace shardpack {
namespace {

std::vector<const StorageBackend*>& Table() {
  static std::vector<const StorageBackend*> table = {
      HttpBackend(),
      HttpsBackend(),
      S3Backend(),
  };
  return table;
}

}  // namespace

const StorageBackend* FindStorageBackend(const std::string& scheme) {
  for (const StorageBackend* b : Table()) {
    if (scheme == b->scheme()) return b;
  }
  return nullptr;
}

std::string KnownStorageSchemes() {
  std::string names;
  for (const StorageBackend* b : Table()) names += (names.empty() ? "" : ", ") + std::string(b->scheme());
  return names;
}

void RegisterStorageBackend(const StorageBackend* backend) {
  for (const StorageBackend*& b : Table()) {
    if (std::string(b->scheme()) == backend->scheme()) {
      b = backend;
      return;
    }
  }
  Table().push_back(backend);
}

}  // namespace shardpack
