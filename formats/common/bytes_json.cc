#include "formats/common/bytes_json.h"

#include <cstdint>

namespace shardpack {

std::string Base64(std::string_view in) {
  static const char* kDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = uint32_t(uint8_t(in[i])) << 16 | uint32_t(uint8_t(in[i + 1])) << 8 | uint8_t(in[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += kDigits[(v >> k) & 63];
  }
  if (i < in.size()) {
    const uint32_t v = uint32_t(uint8_t(in[i])) << 16 | (i + 1 < in.size() ? uint32_t(uint8_t(in[i + 1])) << 8 : 0);
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < in.size() ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

nlohmann::json BytesJson(std::string_view bytes) {
  nlohmann::json text = std::string(bytes);
  try {
    (void)text.dump();  // throws on invalid UTF-8
    return text;
  } catch (const nlohmann::json::exception&) {
    return {{"base64", Base64(bytes)}};
  }
}

}  // namespace shardpack
