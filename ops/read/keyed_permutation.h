// KeyedPermutation: a pseudo-random permutation of [0, n) computed one position at a time, so that
// an epoch's order over a billion samples needs no array of them (issue 39).
//
// How: a balanced Feistel network over the smallest even number of bits 2h with 2^(2h) >= n, whose
// round function is a keyed 64-bit mixer (murmur3's finaliser), and cycle walking: a value at or
// above n is encrypted again until it falls below n. A Feistel network is a bijection of [0, 2^(2h))
// whatever its round function, and cycle walking turns a bijection of a larger set into one of
// [0, n) (the walk from i < n stays on i's cycle, which returns to [0, n) before it returns to i).
// 2^(2h) < 4n, so a position costs fewer than four encryptions on average. Eight rounds: after
// four, a Feistel network with random round functions is already indistinguishable from a random
// permutation (Luby-Rackoff); the rest is margin for a mixer that is not a random function.
#pragma once

#include <array>
#include <cstdint>

namespace shardpack {

// The key of draw `epoch` of the stream `seed`: splitmix64's output for (seed, epoch), so that
// neighbouring seeds and epochs give unrelated keys. Every seeded order derives its key here (the
// epoch's shuffle, a mixture's batch layout, a permutation's round keys).
uint64_t EpochKey(uint64_t seed, uint64_t epoch);

class KeyedPermutation {
 public:
  static constexpr int kRounds = 8;

  KeyedPermutation() = default;
  // The permutation of [0, n) that `key` selects; n may be anything up to 2^64 - 1.
  KeyedPermutation(uint64_t n, uint64_t key);

  uint64_t size() const { return n_; }
  // The value at position `i` (< size()).
  uint64_t operator()(uint64_t i) const;
  // The position of value `v` (< size()): Inverse((*this)(i)) == i.
  uint64_t Inverse(uint64_t v) const;

 private:
  uint64_t Encrypt(uint64_t x) const;
  uint64_t Decrypt(uint64_t x) const;
  uint64_t Round(int round, uint64_t half) const;

  uint64_t n_ = 0;
  int half_bits_ = 0;  // h: each half of a value
  uint64_t half_mask_ = 0;
  std::array<uint64_t, kRounds> keys_{};
};

}  // namespace shardpack
