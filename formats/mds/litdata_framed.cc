#include "formats/mds/litdata_framed.h"

#include <zstd.h>

#include <cstring>
#include <vector>

#include "formats/mds/mds_index.h"
#include "ground/little_endian.h"

namespace shardpack {
namespace {

constexpr char kMagic[8] = {'L', 'D', 'F', 'Z', '0', '1', '\0', '\0'};
constexpr uint64_t kPrefixBytes = 24, kFrameBytes = 24;

}  // namespace

bool IsLitDataFramedChunk(std::string_view file) {
  return file.size() >= sizeof(kMagic) && std::memcmp(file.data(), kMagic, sizeof(kMagic)) == 0;
}

Status UnframeLitDataChunk(std::string_view file, uint64_t items, const std::string& path, std::string* classic) {
  const auto damaged = [&](const std::string& why) {
    return Status::DataLoss(path + ": its LitData zstd framing is damaged: " + why);
  };
  if (!IsLitDataFramedChunk(file) || file.size() < kPrefixBytes) return damaged("no LDFZ01 header");
  const char* p = file.data();
  const uint64_t version = LoadLe(p + 8, 2), num_items = LoadLe(p + 12, 4), n_frames = LoadLe(p + 20, 4);
  if (version != 1) return damaged("version " + std::to_string(version) + " (shardpack reads version 1)");
  if (num_items != items) {
    return damaged("it holds " + std::to_string(num_items) + " items, index.json says " + std::to_string(items));
  }
  const uint64_t offsets_at = kPrefixBytes, frames_at = offsets_at + 4 * (num_items + 1);
  if (n_frames > num_items || file.size() < frames_at + kFrameBytes * n_frames)
    return damaged("its tables run past the end");
  // The logical offsets: from 0, never falling, their total what the frames inflate to.
  std::vector<uint64_t> logical(num_items + 1);
  for (uint64_t i = 0; i <= num_items; ++i) {
    logical[i] = LoadLe(p + offsets_at + 4 * i, 4);
    if ((i == 0 && logical[i] != 0) || (i > 0 && logical[i] < logical[i - 1]))
      return damaged("its offsets are out of order");
  }
  const uint64_t header = 4 * (num_items + 2);
  if (header + logical[num_items] >= kMaxMdsShardBytes) return damaged("its items are over 4 GiB");
  classic->assign(header + logical[num_items], '\0');
  StoreLe32(static_cast<uint32_t>(num_items), classic->data());
  for (uint64_t i = 0; i <= num_items; ++i)
    StoreLe32(static_cast<uint32_t>(header + logical[i]), classic->data() + 4 + 4 * i);
  uint64_t next_item = 0;
  for (uint64_t f = 0; f < n_frames; ++f) {
    const char* frame = p + frames_at + kFrameBytes * f;
    const uint64_t first = LoadLe(frame, 4), count = LoadLe(frame + 4, 4), at = LoadLe(frame + 8, 8),
                   size = LoadLe(frame + 16, 4), inflated = LoadLe(frame + 20, 4);
    // Frames cover the items in order, each exactly its items' bytes.
    if (first != next_item || count == 0 || count > num_items - first || at > file.size() || size > file.size() - at ||
        inflated != logical[first + count] - logical[first]) {
      return damaged("frame " + std::to_string(f) + " does not match the items it covers");
    }
    const size_t n = ZSTD_decompress(classic->data() + header + logical[first], inflated, file.data() + at, size);
    if (ZSTD_isError(n) || n != inflated) {
      classic->clear();
      return damaged("frame " + std::to_string(f) + " does not decompress to its " + std::to_string(inflated) +
                     " bytes" + (ZSTD_isError(n) ? std::string(" (zstd: ") + ZSTD_getErrorName(n) + ")" : ""));
    }
    next_item = first + count;
  }
  if (next_item != num_items) {
    classic->clear();
    return damaged("its frames cover " + std::to_string(next_item) + " of its " + std::to_string(num_items) + " items");
  }
  return Status::OK();
}

}  // namespace shardpack
