// Sizes computed from numbers a user gave (batch sizes, budgets, bucket sides) must not wrap: a
// wrapped product allocates a small buffer that the decoders then write past. Every such product
// goes through CheckedProduct, and its caller turns a false into an error naming the option.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace shardpack {

// *product = the product of `factors`; false (and *product untouched) when it does not fit 64 bits.
inline bool CheckedProduct(std::initializer_list<uint64_t> factors, uint64_t* product) {
  uint64_t p = 1;
  for (uint64_t f : factors) {
    if (__builtin_mul_overflow(p, f, &p)) return false;
  }
  *product = p;
  return true;
}

}  // namespace shardpack
