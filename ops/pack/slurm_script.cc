#include "ops/pack/slurm_script.h"

#include <cctype>
#include <cstdio>
#include <utility>

#include "ground/printable.h"
#include "ground/shell_quote.h"

namespace shardpack {

namespace {

bool HasControlCharacter(const std::string& text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

bool AllDigits(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// Slurm's time formats (sbatch(1), --time): "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", or
// UNLIMITED / INFINITE.
bool IsSlurmTime(const std::string& t) {
  if (t == "UNLIMITED" || t == "INFINITE") return true;
  const size_t dash = t.find('-');
  std::string clock = t;
  if (dash != std::string::npos) {
    if (!AllDigits(t.substr(0, dash))) return false;
    clock = t.substr(dash + 1);
  }
  size_t fields = 0;
  for (size_t start = 0;; ++fields) {
    const size_t colon = clock.find(':', start);
    if (!AllDigits(clock.substr(start, colon == std::string::npos ? std::string::npos : colon - start))) return false;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return fields < 3;
}

// sbatch --mem-per-cpu: a whole number with an optional unit K, M, G or T.
bool IsSlurmMemory(const std::string& m) {
  const std::string digits =
      !m.empty() && std::string("KMGT").find(m.back()) != std::string::npos ? m.substr(0, m.size() - 1) : m;
  return AllDigits(digits);
}

// A partition name, or a comma-separated list of them: letters, digits, '_', '-', '.'.
bool IsSlurmPartition(const std::string& p) {
  if (p.empty() || p.front() == ',' || p.back() == ',' || p.find(",,") != std::string::npos) return false;
  for (const char c : p) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ',')) return false;
  }
  return true;
}

}  // namespace

Status CheckSlurmScriptOptions(const SlurmScriptOptions& o) {
  const auto refuse = [](const std::string& option, const std::string& value, const std::string& why) {
    return Status::InvalidArgument(option + " " + ShellQuote(Printable(value, value.size())) + ": " + why);
  };
  std::vector<std::pair<std::string, std::string>> values = {{"SRC", o.src},
                                                             {"OUT", o.out},
                                                             {"--shardpack", o.shardpack},
                                                             {"--time", o.time},
                                                             {"--mem-per-cpu", o.mem_per_cpu},
                                                             {"--slurm-partition", o.partition}};
  for (const std::string& arg : o.pack) values.push_back({"pack option", arg});
  for (const auto& [option, value] : values) {
    if (HasControlCharacter(value)) {
      return refuse(option, value, "holds a control character (a newline would be a line of the script of its own)");
    }
  }
  if (o.format == DatasetFormat::kLmdb) {
    return Status::InvalidArgument(
        "--format lmdb: every array task would fail with \"--partition: the lmdb format writes one file, which "
        "cannot be packed in parts; pack wds or raw in parts and convert the merged dataset\"");
  }
  if (!IsSlurmTime(o.time)) {
    return refuse("--time", o.time, "not a Slurm time (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED)");
  }
  if (!IsSlurmMemory(o.mem_per_cpu)) {
    return refuse("--mem-per-cpu", o.mem_per_cpu, "not a Slurm memory size (a whole number, then K, M, G or T)");
  }
  if (!o.partition.empty() && !IsSlurmPartition(o.partition)) {
    return refuse("--slurm-partition", o.partition,
                  "not a Slurm partition name (letters, digits, '_', '-', '.'; several separated by ',')");
  }
  return Status::OK();
}

Status SlurmPackScript(const SlurmScriptOptions& o, std::string* script) {
  SHARDPACK_RETURN_IF_ERROR(CheckSlurmScriptOptions(o));
  std::string pack = ShellQuote(o.shardpack) + " pack " + ShellQuote(o.src) + " " + ShellQuote(o.out);
  for (const std::string& arg : o.pack) pack += " " + ShellQuote(arg);
  pack += " --partition slurm --partitions " + std::to_string(o.tasks) +
          " --resume --threads \"${SLURM_CPUS_PER_TASK:-0}\" --quiet";
  const std::string merge = ShellQuote(o.shardpack) + " merge " + ShellQuote(o.out);
  const std::string tasks = std::to_string(o.tasks);
  const std::string partition =
      o.partition.empty() ? "##SBATCH --partition=YOUR_PARTITION" : "#SBATCH --partition=" + o.partition;
  *script =
      "#!/bin/bash\n"
      "# Packs " +
      ShellQuote(o.src) + " into " + ShellQuote(o.out) + " as a Slurm job array of " + tasks +
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
  return Status::OK();
}

}  // namespace shardpack
