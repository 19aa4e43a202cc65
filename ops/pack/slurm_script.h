// shardpack slurm-script: the submit script of a pack as a Slurm job array (docs/distributed.md).
// Text only: the CLI prints it, the user edits its #SBATCH lines and runs it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardpack/dataset_format.h"
#include "shardpack/status.h"

namespace shardpack {

struct SlurmScriptOptions {
  std::string shardpack;          // the binary the tasks run (an absolute path)
  std::string src, out;           // as given to pack
  std::vector<std::string> pack;  // further pack options, passed through
  uint32_t tasks = 1;             // array tasks, one part each
  uint32_t cpus_per_task = 16;
  std::string time = "04:00:00";  // per task
  std::string mem_per_cpu = "2G";
  std::string partition;  // Slurm partition; empty: a commented line to fill in
  // The pack's format, as its options give it: lmdb writes one file, which no array can write in
  // parts, so a script for it is refused when it is made rather than failing in every task.
  DatasetFormat format = DatasetFormat::kWebDataset;
};

// A bash script that writes OUT's sbatch files into the folder it runs in (shardpack-pack.sbatch,
// the array; shardpack-merge.sbatch, the merge) and submits both, the merge with
// --dependency=afterok on the array. Each task runs `pack SRC OUT --partition slurm --resume
// --threads $SLURM_CPUS_PER_TASK`, so a requeued or resubmitted task continues its part.
//
// The script is data, not code: every value in it is checked first (CheckSlurmScriptOptions) and
// every path or pack option is single-quoted, so that nothing a path holds ("$(...)", a quote)
// runs. InvalidArgument naming the option otherwise.
Status SlurmPackScript(const SlurmScriptOptions& options, std::string* script);

// No control character (a newline would start a line of its own in the script) in any value;
// --time, --mem-per-cpu and --slurm-partition by Slurm's syntax for them; a format that cannot be
// packed in parts (lmdb), with the message each task would have printed.
Status CheckSlurmScriptOptions(const SlurmScriptOptions& options);

}  // namespace shardpack
