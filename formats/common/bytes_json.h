// Bytes of another tool's record (a TFRecord feature, an MDS column) as JSON, where a converted
// sample keeps them in its "json" field: text when they are UTF-8, else {"base64": "..."}, so that
// nothing is lost and nothing invalid is written.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace shardpack {

// Standard base64 (RFC 4648, with '=' padding).
std::string Base64(std::string_view in);
// `bytes` as a JSON string when they are valid UTF-8, else as {"base64": Base64(bytes)}.
nlohmann::json BytesJson(std::string_view bytes);

}  // namespace shardpack
