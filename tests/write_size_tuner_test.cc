// WriteSizeTuner (ground/write_size_tuner.h): tries each write size, then keeps to the fastest,
// probing the others every kProbeEvery-th piece, and follows a change of which one is fastest.
// The rates here are given, not measured, so the choices are exact.
#include "ground/write_size_tuner.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace shardpack {
namespace {

constexpr size_t kSmall = 8 << 10, kLarge = 32 << 10;
constexpr uint64_t kPiece = 4 << 20;

// Asks for `pieces` sizes, recording each piece as written at the size's rate (bytes/s) in
// `rates`; returns how many pieces each size got.
std::map<size_t, int> WritePieces(WriteSizeTuner* tuner, int pieces, const std::map<size_t, double>& rates) {
  std::map<size_t, int> got;
  for (int i = 0; i < pieces; ++i) {
    const size_t size = tuner->Next();
    ++got[size];
    tuner->Record(size, kPiece, double(kPiece) / rates.at(size));
  }
  return got;
}

TEST(WriteSizeTuner, TriesEachSizeFirstThenKeepsToTheFastestAndProbesTheOther) {
  WriteSizeTuner tuner({kSmall, kLarge});
  // The first pieces go to each size in turn, kTries each, the first size first.
  std::vector<size_t> first;
  for (int i = 0; i < 2 * WriteSizeTuner::kTries; ++i) {
    first.push_back(tuner.Next());
    tuner.Record(first.back(), kPiece, first.back() == kSmall ? 0.004 : 0.002);  // the large size twice as fast
  }
  EXPECT_EQ(first, (std::vector<size_t>{kSmall, kLarge, kSmall, kLarge}));
  // 160 pieces more (choices 5-164): the probes are the choices divisible by 16 (16, 32, ..., 160),
  // 10 of them, for the small size; every other piece the large one.
  const std::map<size_t, int> got = WritePieces(&tuner, 160, {{kSmall, 1e9}, {kLarge, 2e9}});
  EXPECT_EQ(got.at(kSmall), 10);
  EXPECT_EQ(got.at(kLarge), 150);
}

TEST(WriteSizeTuner, FollowsAChangeOfTheFastestSize) {
  WriteSizeTuner tuner({kSmall, kLarge});
  WritePieces(&tuner, 64, {{kSmall, 1e9}, {kLarge, 2e9}});
  EXPECT_EQ(tuner.Next(), kLarge);
  // The host changes: the small size is now four times as fast. Only probes measure it, each
  // moving its average a third of the way: after the first probe (choice 80) it is the faster.
  WritePieces(&tuner, 64, {{kSmall, 4e9}, {kLarge, 1e9}});  // choices 66-129
  // From then on only the probes (choices 144 and 160) go to the large size.
  const std::map<size_t, int> got = WritePieces(&tuner, 32, {{kSmall, 4e9}, {kLarge, 1e9}});  // choices 130-161
  EXPECT_EQ(got.at(kSmall), 30);
  EXPECT_EQ(got.at(kLarge), 2);
}

TEST(WriteSizeTuner, SmallPiecesAreNotMeasured) {
  WriteSizeTuner tuner({kSmall, kLarge});
  // Pieces under 1 MiB say nothing of the rate: however fast they seem, the tuner stays in its
  // first tries (which go to the size with the fewest measurements, the first one).
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(tuner.Next(), kSmall) << i;
    tuner.Record(kSmall, WriteSizeTuner::kMinMeasuredBytes - 1, 1e-9);
  }
}

}  // namespace
}  // namespace shardpack
