// Text for a bash command line: what a generated script (slurm_script.h) or a message that gives
// the command to run holds of a value that came from outside.
#pragma once

#include <string>

namespace shardpack {

// `text` quoted for bash, always (single quotes; a quote inside as '\'').
std::string ShellQuote(const std::string& text);
// `text` as it is when bash reads it so (letters, digits and _ . / , : = + - @ only), else quoted:
// for commands that people read.
std::string ShellWord(const std::string& text);

}  // namespace shardpack
