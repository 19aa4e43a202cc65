#include "ops/opened_dataset.h"

#include "formats/registry/registry.h"
#include "ops/remote_dataset.h"

namespace shardpack {

Status OpenDataset(const std::string& location, Env* env, OpenedDataset* dataset) {
  SHARDPACK_RETURN_IF_ERROR(ResolveDatasetLocation(location, env, &dataset->dir));
  SHARDPACK_RETURN_IF_ERROR(ReadManifest(env, dataset->dir, &dataset->manifest));
  return FindFormatOf(dataset->dir, dataset->manifest, &dataset->format);
}

}  // namespace shardpack
