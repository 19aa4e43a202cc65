// The shardpack command line as a function, so that `python -m shardpack` runs the same code as the
// `shardpack` executable.
#pragma once

namespace shardpack {

// Parses argv (argv[0] is the program name), runs the command, prints, and returns the exit status.
int RunCommandLine(int argc, char** argv);

}  // namespace shardpack
