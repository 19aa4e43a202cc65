#include "formats/mds/mds_input.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "formats/mds/mds_shard_file.h"
#include "ground/opencv_imdecode.h"
#include "ground/sample_keys.h"

namespace shardpack {
namespace {

// A pil image's pixels as the bytes of a PNG.
Status EncodePng(const DecodedImage& pixels, std::string* png) {
  const cv::Mat rgb(int(pixels.height), int(pixels.width), CV_8UC3, const_cast<uint8_t*>(pixels.rgb.data()));
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  std::vector<uint8_t> encoded;
  SHARDPACK_RETURN_IF_ERROR(OpenCvImEncode(".png", bgr, {}, &encoded));
  png->assign(encoded.begin(), encoded.end());
  return Status::OK();
}

}  // namespace

Status MdsInput::Open(Env* env, const std::string& dir, uint64_t max_member_bytes, std::unique_ptr<PackInput>* input) {
  MdsDataset dataset;
  SHARDPACK_RETURN_IF_ERROR(OpenMdsDataset(env, dir, &dataset));
  input->reset(new MdsInput(env, std::move(dataset), max_member_bytes));
  return Status::OK();
}

Status MdsInput::Next(PackItem* item, bool* done) {
  *done = false;
  item->status = Status::OK();
  item->loaded = true;
  item->bytes.clear();
  item->fields.clear();
  item->field_relpaths.clear();
  item->extra = nullptr;
  item->label = -1;
  const std::vector<MdsShardInfo>& shards = dataset_.index.shards;
  while (shard_ < shards.size()) {
    const MdsShardInfo& shard = shards[shard_];
    if (!loaded_) {
      Status s = LoadMdsShard(env_, dataset_.dir, shard, &bytes_);
      if (s.ok()) {
        s = MdsShardView::Open(bytes_.bytes(), shard.samples, JoinPath(dataset_.dir, shard.stored().basename), &view_);
      }
      if (!s.ok()) {
        // The whole shard: one line, and its samples' places stay theirs (keys do not shift).
        item->relpath = JoinPath(dataset_.dir, shard.stored().basename);
        item->status = s.WithMessage(s.message() + "; its " + std::to_string(shard.samples) + " samples are skipped");
        position_ += shard.samples;
        ++shard_;
        return Status::OK();
      }
      loaded_ = true;
      local_ = 0;
    }
    if (local_ == shard.samples) {
      loaded_ = false;
      bytes_.Clear();
      ++shard_;
      continue;
    }
    item->relpath = JoinPath(dataset_.dir, MdsSampleName(shard, local_));
    item->key = IndexKey(position_);
    Emit(view_.sample(local_), item);
    ++local_;
    ++position_;
    return Status::OK();
  }
  *done = true;
  return Status::OK();
}

void MdsInput::Emit(std::string_view sample, PackItem* item) {
  MdsDecoded decoded;
  item->status = DecodeMdsSampleBytes(dataset_, sample, /*want_fields=*/true, kMaxMdsShardBytes, &decoded);
  if (!item->status.ok()) return;
  if (dataset_.layout.image_is_pil) {
    item->status = EncodePng(decoded.pixels, &item->bytes);
  } else if (decoded.encoded.size() > max_member_bytes_) {
    item->status = Status::Corrupt("its image of " + std::to_string(decoded.encoded.size()) +
                                   " bytes is over the bound of " + std::to_string(max_member_bytes_));
  } else {
    item->bytes.assign(decoded.encoded);
  }
  if (!item->status.ok()) return;
  item->label = decoded.label;
  if (decoded.fields.empty()) return;
  if (keep_fields_) {
    item->fields.push_back({"json", decoded.fields.dump()});
  } else {
    item->extra = {{"mds", std::move(decoded.fields)}};
  }
}

}  // namespace shardpack
