// MirrorRgbInPlace: see ground/mirror_rgb.h.
#include "ground/mirror_rgb.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>
#define SHARDPACK_MIRROR_SSSE3 1
#endif

namespace shardpack {
namespace {

#ifdef SHARDPACK_MIRROR_SSSE3

// Swaps pixels a and b (3 bytes each) of a row.
void SwapPixels(uint8_t* row, int a, int b) {
  uint8_t t[3];
  std::memcpy(t, row + 3 * a, 3);
  std::memcpy(row + 3 * a, row + 3 * b, 3);
  std::memcpy(row + 3 * b, t, 3);
}

// 16 pixels are 48 bytes, three 16-byte registers, and reversing their order is a fixed byte
// permutation: output byte k is input byte 3 * (15 - k / 3) + k % 3. Output register r takes its
// bytes from input registers q through one PSHUFB mask each (index in q, or 0x80 for a zero), the
// three results OR-ed. kBlockMasks[r][q] is that mask, computed once.
struct BlockMasks {
  alignas(16) int8_t mask[3][3][16];
  BlockMasks() {
    for (int r = 0; r < 3; ++r) {
      for (int q = 0; q < 3; ++q) {
        for (int b = 0; b < 16; ++b) {
          const int k = 16 * r + b;
          const int from = 3 * (15 - k / 3) + k % 3;
          mask[r][q][b] = from / 16 == q ? int8_t(from % 16) : int8_t(-128);
        }
      }
    }
  }
};

struct Block {
  __m128i part[3];
};

// The 16 pixels at `p`, in reverse order. (Output register 0 takes nothing from input register 0,
// nor register 2 from input register 2: those masks would be all zeros, and are skipped.)
__attribute__((target("ssse3"))) inline Block ReversedBlock(const uint8_t* p, const __m128i (&m)[3][3]) {
  const __m128i in0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i in1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
  const __m128i in2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32));
  Block out;
  out.part[0] = _mm_or_si128(_mm_shuffle_epi8(in1, m[0][1]), _mm_shuffle_epi8(in2, m[0][2]));
  out.part[1] = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(in0, m[1][0]), _mm_shuffle_epi8(in1, m[1][1])),
                             _mm_shuffle_epi8(in2, m[1][2]));
  out.part[2] = _mm_or_si128(_mm_shuffle_epi8(in0, m[2][0]), _mm_shuffle_epi8(in1, m[2][1]));
  return out;
}

__attribute__((target("ssse3"))) inline void StoreBlock(uint8_t* p, const Block& b) {
  for (int r = 0; r < 3; ++r) _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 16 * r), b.part[r]);
}

// Each row from both ends: the 16 pixels at the left and the 16 at the right are both loaded
// before either is stored, so the swap needs no copy of the row; the fewer than 32 pixels left in
// the middle are swapped one by one.
__attribute__((target("ssse3"))) void MirrorRowsSsse3(cv::Mat* image) {
  static const BlockMasks kBlockMasks;
  __m128i masks[3][3];
  for (int r = 0; r < 3; ++r) {
    for (int q = 0; q < 3; ++q) masks[r][q] = _mm_load_si128(reinterpret_cast<const __m128i*>(kBlockMasks.mask[r][q]));
  }
  const int width = image->cols;
  for (int y = 0; y < image->rows; ++y) {
    uint8_t* row = image->ptr<uint8_t>(y);
    int j = 0;
    for (; 2 * j + 32 <= width; j += 16) {
      uint8_t* left = row + 3 * j;
      uint8_t* right = row + 3 * (width - 16 - j);
      const Block from_left = ReversedBlock(left, masks);
      const Block from_right = ReversedBlock(right, masks);
      StoreBlock(left, from_right);
      StoreBlock(right, from_left);
    }
    for (int a = j, b = width - 1 - j; a < b; ++a, --b) SwapPixels(row, a, b);
  }
}

#endif  // SHARDPACK_MIRROR_SSSE3

}  // namespace

void MirrorRgbInPlace(cv::Mat* image) {
#ifdef SHARDPACK_MIRROR_SSSE3
  static const bool kHasSsse3 = __builtin_cpu_supports("ssse3");
  if (kHasSsse3 && image->type() == CV_8UC3) {
    MirrorRowsSsse3(image);
    return;
  }
#endif
  cv::flip(*image, *image, 1);
}

}  // namespace shardpack
