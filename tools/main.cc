#include <cstdio>
#include <exception>
#include <new>

#include "tools/command_line.h"

// The library returns Status and catches what its workers throw; this is the last guard, so that
// nothing (an allocation that failed where no Status could say so) ends the process in abort()
// with a core dump instead of a message and a non-zero exit.
int main(int argc, char** argv) {
  try {
    return shardpack::RunCommandLine(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "shardpack: out of memory (an allocation failed): lower the sizes asked for (batch, "
                 "buckets, threads) or free memory\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shardpack: internal error: %s (please report it)\n", e.what());
  }
  return 1;
}
