#include "ops/read/keyed_permutation.h"

namespace shardpack {

namespace {

// murmur3's 64-bit finaliser: every input bit flips each output bit with probability close to 1/2.
uint64_t Mix(uint64_t z) {
  z ^= z >> 33;
  z *= 0xFF51AFD7ED558CCDull;
  z ^= z >> 33;
  z *= 0xC4CEB9FE1A85EC53ull;
  return z ^ (z >> 33);
}

}  // namespace

uint64_t EpochKey(uint64_t seed, uint64_t epoch) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (epoch + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

KeyedPermutation::KeyedPermutation(uint64_t n, uint64_t key) : n_(n) {
  // The fewest bits b with 2^b >= n, rounded up to an even number (at least 2).
  int bits = 0;
  while (bits < 64 && (uint64_t(1) << bits) < n) ++bits;
  half_bits_ = (bits + 1) / 2 < 1 ? 1 : (bits + 1) / 2;
  half_mask_ = half_bits_ >= 32 ? 0xFFFFFFFFull : (uint64_t(1) << half_bits_) - 1;
  // Round keys from the key through splitmix64's sequence, so that neighbouring keys are unrelated.
  for (int r = 0; r < kRounds; ++r) keys_[r] = EpochKey(key, uint64_t(r));
}

uint64_t KeyedPermutation::Round(int round, uint64_t half) const { return Mix(half ^ keys_[round]) & half_mask_; }

uint64_t KeyedPermutation::Encrypt(uint64_t x) const {
  uint64_t left = (x >> half_bits_) & half_mask_, right = x & half_mask_;
  for (int r = 0; r < kRounds; ++r) {
    const uint64_t next = left ^ Round(r, right);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t KeyedPermutation::Decrypt(uint64_t x) const {
  uint64_t left = (x >> half_bits_) & half_mask_, right = x & half_mask_;
  for (int r = kRounds - 1; r >= 0; --r) {
    const uint64_t previous = right ^ Round(r, left);
    right = left;
    left = previous;
  }
  return (left << half_bits_) | right;
}

uint64_t KeyedPermutation::operator()(uint64_t i) const {
  uint64_t x = Encrypt(i);
  while (x >= n_) x = Encrypt(x);
  return x;
}

uint64_t KeyedPermutation::Inverse(uint64_t v) const {
  uint64_t x = Decrypt(v);
  while (x >= n_) x = Decrypt(x);
  return x;
}

}  // namespace shardpack
