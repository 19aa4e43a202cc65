// `shardpack report` (and `stat --html`): stat, optionally verify and doctor, and thumbnails, as one
// JSON object (`--json`) and one self-contained HTML page drawn from it (docs/report.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "shardpack/doctor.h"
#include "shardpack/remote_options.h"
#include "shardpack/stat.h"

namespace shardpack {

struct ReportFlags {
  std::string dataset;
  // Instead of `dataset`, a mixture (--source LOCATION WEIGHT, repeated): each source reported in
  // full, after a table of the sources with their quotas of an epoch.
  std::vector<std::pair<std::string, std::string>> sources;
  std::string output;  // the page; empty: report.html, or none with --json
  bool json = false;
  bool force = false;  // replace an existing page
  bool verify = false, decode = false;
  bool doctor = false;
  DoctorOptions doctor_options;
  uint32_t thumbnails = 24;
  uint64_t seed = 0;
  int threads = 0;
  RemoteOptions remote;
};

CLI::App* AddReportCommand(CLI::App& app, ReportFlags& f);
// The page of `f` for a dataset whose stat is done: `stat --html`. Prints nothing.
Status WriteStatPage(ReportFlags& f, const DatasetStats& stats);
// Runs the report `f` asks for; the exit status (1 also when --verify found problems, as verify).
int RunReport(ReportFlags& f);

}  // namespace shardpack
