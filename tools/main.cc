#include "tools/command_line.h"

int main(int argc, char** argv) { return shardpack::RunCommandLine(argc, argv); }
