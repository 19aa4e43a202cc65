#include "ops/slurm_script.h"

namespace shardpack {

std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string SlurmPackScript(const SlurmScriptOptions& o) {
  std::string pack = ShellQuote(o.shardpack) + " pack " + ShellQuote(o.src) + " " + ShellQuote(o.out);
  for (const std::string& arg : o.pack) pack += " " + ShellQuote(arg);
  pack += " --partition slurm --partitions " + std::to_string(o.tasks) +
          " --resume --threads \"${SLURM_CPUS_PER_TASK:-0}\" --quiet";
  const std::string merge = ShellQuote(o.shardpack) + " merge " + ShellQuote(o.out);
  const std::string tasks = std::to_string(o.tasks);
  const std::string partition =
      o.partition.empty() ? "##SBATCH --partition=YOUR_PARTITION" : "#SBATCH --partition=" + o.partition;
  return "#!/bin/bash\n"
         "# Packs " +
         o.src + " into " + o.out + " as a Slurm job array of " + tasks +
         " tasks, one part each, then merges\n"
         "# the parts (written by `shardpack slurm-script`; docs/distributed.md). Edit the #SBATCH lines, then\n"
         "# run this script where the sbatch files may be written. A task that failed or was cancelled: rerun\n"
         "# it alone with `sbatch --array=I shardpack-pack.sbatch` (it continues its part), then\n"
         "# `sbatch shardpack-merge.sbatch` or `shardpack merge OUT`.\n"
         "set -euo pipefail\n"
         "cat >shardpack-pack.sbatch <<'SHARDPACK_PACK'\n"
         "#!/bin/bash\n"
         "#SBATCH --job-name=shardpack-pack\n"
         "#SBATCH --array=0-" +
         std::to_string(o.tasks == 0 ? 0 : o.tasks - 1) +
         "\n"
         "#SBATCH --cpus-per-task=" +
         std::to_string(o.cpus_per_task) +
         "\n"
         "#SBATCH --mem-per-cpu=" +
         o.mem_per_cpu +
         "\n"
         "#SBATCH --time=" +
         o.time +
         "\n"
         "#SBATCH --output=shardpack-pack-%A_%a.out\n" +
         partition +
         "\n"
         "# The array's size is the number of parts: keep --array=0-" +
         std::to_string(o.tasks == 0 ? 0 : o.tasks - 1) +
         " (or resubmit single tasks of it).\n"
         "exec " +
         pack +
         "\n"
         "SHARDPACK_PACK\n"
         "cat >shardpack-merge.sbatch <<'SHARDPACK_MERGE'\n"
         "#!/bin/bash\n"
         "#SBATCH --job-name=shardpack-merge\n"
         "#SBATCH --cpus-per-task=1\n"
         "#SBATCH --time=00:10:00\n"
         "#SBATCH --output=shardpack-merge-%j.out\n" +
         partition +
         "\n"
         "exec " +
         merge +
         "\n"
         "SHARDPACK_MERGE\n"
         "array=$(sbatch --parsable shardpack-pack.sbatch)\n"
         "merge=$(sbatch --parsable --dependency=afterok:\"${array%%;*}\" shardpack-merge.sbatch)\n"
         "echo \"submitted the pack array ${array%%;*} (" +
         tasks + " tasks) and the merge ${merge%%;*} after it\"\n";
}

}  // namespace shardpack
