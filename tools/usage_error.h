// The command line's own errors (an unknown flag or command, a flag's bad value) in the one-line form
// every failure prints, "<command> failed: <why>", with the flag or command the user probably
// meant ("did you mean --threads?"), instead of CLI11's two lines in its own words.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

// A command's failure: prints "<command> failed: <why>" on stderr and returns the exit status, 1.
int Fail(const char* command, const Status& s);

// Prints the error on stderr and returns the exit status (2; 0 for --help and --version, which
// CLI11 prints as usual). `args`: the arguments after the program's name.
int ReportUsageError(CLI::App& app, const CLI::ParseError& error, const std::vector<std::string>& args);

// The library's errors name its options as the C++ and Python APIs spell them (batch_size); a command
// prints them as its flags (--batch). `names`: each option's name and the flag that sets it. Only
// whole words are replaced.
Status InFlagWords(const Status& s, const std::vector<std::pair<std::string, std::string>>& names);

// The name in `names` closest to `typed` by edit distance, when close enough to be the one meant
// (at most a third of its length, and at least 1, apart; a prefix counts too); empty otherwise.
std::string ClosestName(const std::string& typed, const std::vector<std::string>& names);

}  // namespace shardpack
