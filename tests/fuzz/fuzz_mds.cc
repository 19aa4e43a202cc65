// Fuzz target: an MDS or LitData dataset's index.json and a shard (its count, offsets and samples,
// whose column sizes may claim anything; or LitData's zstd framing of one), split from one input at
// its first NUL byte: the index before it, the shard after.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/mds/litdata_framed.h"
#include "formats/mds/litdata_index.h"
#include "formats/mds/mds_index.h"
#include "formats/mds/mds_sample.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardpack;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const size_t nul = bytes.find('\0');
  const std::string_view index_text = bytes.substr(0, nul);
  const std::string_view shard = nul == std::string_view::npos ? std::string_view() : bytes.substr(nul + 1);
  MdsIndex index;
  const bool parsed =
      ParseMdsIndex(index_text, "index.json", &index).ok() || ParseLitDataIndex(index_text, "index.json", &index).ok();
  // A LitData framed chunk: unframed, then read as any chunk.
  std::string unframed;
  std::string_view shard_bytes = shard;
  if (IsLitDataFramedChunk(shard)) {
    const uint64_t items = shard.size() >= 16 ? uint8_t(shard[12]) : 0;
    if (!UnframeLitDataChunk(shard, items, "chunk", &unframed).ok()) return 0;
    shard_bytes = unframed;
  }
  if (!parsed || index.shards.empty()) {
    // A fixed layout, so that inputs whose index does not parse still reach the shard's parser.
    index.columns = {{"caption", "str", 0}, {"image", "jpeg", 0}, {"label", "int", 8}, {"pix", "pil", 0}};
    MdsShardInfo info;
    info.samples = shard_bytes.size() >= 4 ? uint8_t(shard_bytes[0]) : 0;
    index.shards = {info};
  }
  MdsLayout layout;
  const bool have_layout = ChooseMdsLayout(index.columns, "index.json", &layout).ok();
  MdsShardView view;
  if (!MdsShardView::Open(shard_bytes, index.shards[0].samples, "shard", &view).ok()) return 0;
  for (uint64_t i = 0; i < view.samples(); ++i) {
    std::vector<std::string_view> values;
    std::string why;
    if (!SplitMdsSample(view.sample(i), index.columns, &values, &why) || !have_layout) continue;
    MdsDecoded decoded;
    (void)DecodeMdsSample(values, index.columns, layout, /*want_fields=*/true, 1 << 20, &decoded);
    // The pil image as its pixel layout at other positions, too.
    (void)DecodeMdsSample(values, index.columns, MdsLayout{int(values.size()) - 1, true, 0, {}}, true, 1 << 20,
                          &decoded);
  }
  return 0;
}
