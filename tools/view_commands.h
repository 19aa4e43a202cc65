// `shardpack subset`, `shardpack split` and `shardpack refresh`: the flags of a view's rule, and the run that prints
// what was written (docs/views.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "shardpack/view.h"

namespace shardpack {

struct ViewFlags {
  std::string in, out, out_b;
  std::vector<std::string> more_outs;  // split --fractions: the third folder on
  std::string classes;                 // comma-separated
  std::string fractions;               // split: comma-separated
  double fraction = -1;
  int64_t count = -1;
  bool json = false;
  ViewOptions options;
  std::vector<std::string> views;  // refresh
};

// Adds the subcommands; each fills its own flags.
CLI::App* AddSubsetCommand(CLI::App& app, ViewFlags& f);
CLI::App* AddSplitCommand(CLI::App& app, ViewFlags& f);
CLI::App* AddRefreshCommand(CLI::App& app, ViewFlags& f);
// Runs the command whose flags are `f` (split when `split`); the exit status.
int RunViewCommand(ViewFlags& f, bool split);
int RunRefreshCommand(ViewFlags& f);

}  // namespace shardpack
