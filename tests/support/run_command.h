// Running the CLI (or a driver) as a child process and comparing the folders it leaves, for the
// tests that kill runs and resume them (resume_test.cc, append_test.cc).
#pragma once

#include <stdio.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace shardpack::testing {

// Whether this is the sanitizer stage of scripts/test.sh (SHARDPACK_TEST_SANITIZED=1), where every
// process runs several times slower: the tests that run the CLI many times do fewer runs there
// (Release runs them all).
inline bool Sanitized() {
  const char* v = std::getenv("SHARDPACK_TEST_SANITIZED");
  return v != nullptr && std::string(v) == "1";
}

// Runs argv; returns the raw wait status. *output: its stdout and stderr together.
inline int RunCommand(const std::vector<std::string>& args, std::string* output = nullptr) {
  std::string cmd = "exec ";  // the status is then the program's own, not a shell's
  for (const std::string& a : args) cmd += "'" + a + "' ";
  cmd += "2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  std::string out;
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  if (output) *output = out;
  return ::pclose(p);
}

// Every file directly in a folder (not in its sub-folders): name -> bytes.
inline std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    // The note of a dataset folder's writer lock (ground/dataset_lock.h), which a killed run
    // leaves: not the dataset.
    if (name == ".shardpack-write.holder") continue;
    if (e.is_regular_file()) files[name] = ReadFile(e.path().string());
  }
  return files;
}

// Empty when the folders hold the same files with the same bytes; else what differs.
inline std::string Difference(const std::map<std::string, std::string>& a,
                              const std::map<std::string, std::string>& b) {
  std::string diff;
  for (const auto& [name, bytes] : a) {
    if (!b.count(name))
      diff += "only in the first: " + name + "\n";
    else if (b.at(name) != bytes)
      diff += "differs: " + name + "\n";
  }
  for (const auto& [name, bytes] : b) {
    if (!a.count(name)) diff += "only in the second: " + name + "\n";
  }
  return diff;
}

}  // namespace shardpack::testing
