// OpenParquetManifest of a build without Arrow's Parquet library (CMake found neither the system's
// nor build/venv's pyarrow): Parquet files are recognised, and refused with the way to read them.
#include "formats/parquet/parquet.h"
#include "formats/parquet/parquet_files.h"

namespace shardpack {

Status OpenParquetManifest(Env* env, const std::string& location, Manifest*, const Format**) {
  ParquetFiles files;
  const Status listed = ListParquetFiles(env, location, &files);
  if (listed.code() == Status::Code::kNotFound) return listed;
  return Status::Unsupported(location +
                             " holds Parquet files, and this shardpack was built without Arrow's Parquet library: "
                             "run scripts/install-deps.sh (it puts pyarrow in build/venv) and build again, or "
                             "convert the files with a shardpack built so");
}

}  // namespace shardpack
