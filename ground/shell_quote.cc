#include "ground/shell_quote.h"

#include <cctype>

namespace shardpack {

std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string ShellWord(const std::string& text) {
  if (text.empty()) return "''";
  for (const char c : text) {
    const bool plain =
        std::isalnum(static_cast<unsigned char>(c)) || std::string("_./,:=+-@").find(c) != std::string::npos;
    if (!plain) return ShellQuote(text);
  }
  return text;
}

}  // namespace shardpack
