// Reading integers out of JSON that came from a file. nlohmann's get<>() converts a float or an
// out-of-range number with a plain cast, which is undefined behaviour past the target type's range
// (fuzz_manifest found a manifest whose "bytes" was 7.2e122), so readers check first.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace shardpack {

// Whether `v` is a JSON integer from min to max. Parsed text gives non-negative integers as
// unsigned and negative ones as signed; an object built in memory may hold either.
inline bool IsJsonIntegerIn(const nlohmann::json& v, int64_t min, uint64_t max) {
  if (v.is_number_unsigned()) {
    const uint64_t x = v.get<uint64_t>();
    return x <= max && (min <= 0 || x >= uint64_t(min));
  }
  if (!v.is_number_integer()) return false;
  const int64_t x = v.get<int64_t>();
  return x >= min && (x < 0 || uint64_t(x) <= max);
}

}  // namespace shardpack
