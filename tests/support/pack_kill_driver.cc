// pack_kill_driver SRC OUT FORMAT SAMPLES_PER_SHARD KILL_AT [I/N | append]: runs the same pack as
//   shardpack pack SRC OUT --format FORMAT --samples-per-shard N --no-sync [--crop 16 for raw]
//   [--partition I/N]
// or, with `append`, the same `shardpack append OUT SRC ...` (tests/append_test.cc)
// through a FaultEnv that kills the process (SIGKILL) at its KILL_AT-th file operation (0: never).
// Without a kill it prints "operations N", the count to choose kill points from. For
// tests/resume_test.cc, which resumes each killed run with the real command line.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "shardpack/pack.h"
#include "tests/support/fault_env.h"

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: %s SRC OUT FORMAT SAMPLES_PER_SHARD KILL_AT [I/N | append]\n", argv[0]);
    return 2;
  }
  shardpack::testing::FaultEnv env;
  env.KillAtOperation(std::strtoull(argv[5], nullptr, 10));
  shardpack::PackOptions o;
  if (!shardpack::ParseDatasetFormat(argv[3], &o.format).ok()) {
    std::fprintf(stderr, "unknown format %s\n", argv[3]);
    return 2;
  }
  o.samples_per_shard = std::strtoull(argv[4], nullptr, 10);
  o.sync = false;
  o.env = &env;
  if (o.format == shardpack::DatasetFormat::kRaw) o.crop_height = o.crop_width = 16;
  const bool append = argc == 7 && std::string(argv[6]) == "append";
  if (argc == 7 && !append && std::sscanf(argv[6], "%u/%u", &o.partition, &o.partitions) != 2) {
    std::fprintf(stderr, "partition %s: not I/N\n", argv[6]);
    return 2;
  }
  shardpack::PackResult r;
  const shardpack::Status s =
      append ? shardpack::Append(argv[1], argv[2], o, &r) : shardpack::Pack(argv[1], argv[2], o, &r);
  if (!s.ok()) {
    std::fprintf(stderr, "pack failed: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("operations %llu\n", static_cast<unsigned long long>(env.operations()));
  return 0;
}
