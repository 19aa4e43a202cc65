// Outside text (a path, a key, an option value) as a message shows it: on one line, every byte
// visible, and short. A NUL would cut the message where a C string or a Python exception ends it,
// a newline would forge a line of its own, and a megabyte key would bury the rest.
#pragma once

#include <cstdio>
#include <string>

namespace shardpack {

// Control characters written as \n, \t or \xNN; longer than `max_bytes`: its start, then "...".
inline std::string Printable(const std::string& text, size_t max_bytes = 200) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == max_bytes) return out + "... (" + std::to_string(text.size()) + " bytes)";
    const char c = text[i];
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02X", static_cast<unsigned char>(c));
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace shardpack
