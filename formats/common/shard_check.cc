#include "formats/common/shard_check.h"

#include <nlohmann/json.hpp>

#include "ground/checksum.h"

namespace shardpack {

bool LoadSideFileForCheck(Env* env, const std::string& dir, const std::string& shard, const SideFile& side,
                          uint64_t max_bytes, ShardCheck* check, std::string* contents) {
  const Status s = env->ReadFile(JoinPath(dir, side.file), max_bytes, contents);
  if (!s.ok()) {
    check->AddProblem(shard, "", side.file + ": " + s.message());
    return false;
  }
  if (ChecksumHex(Xxh64(*contents)) != side.xxh64) {
    check->AddProblem(shard, "", side.file + ": checksum mismatch (file changed since pack)");
  }
  return true;
}

bool ChecksumSideFileForCheck(Env* env, const std::string& dir, const std::string& shard, const SideFile& side,
                              ShardCheck* check, uint64_t* size) {
  uint64_t xxh64 = 0;
  const Status s = ChecksumFile(env, JoinPath(dir, side.file), &xxh64, size);
  if (!s.ok()) {
    check->AddProblem(shard, "", side.file + ": " + s.message());
    return false;
  }
  if (ChecksumHex(xxh64) != side.xxh64) {
    check->AddProblem(shard, "", side.file + ": checksum mismatch (file changed since pack)");
  }
  return true;
}

std::string ResolutionBoundProblem(const Manifest& manifest, std::string_view image, const DecodedImage& decoded) {
  const nlohmann::json options = nlohmann::json::parse(manifest.options_json, nullptr, /*allow_exceptions=*/false);
  if (!options.is_object() || !options.contains("max_side") || !options["max_side"].is_object()) return "";
  const nlohmann::json& bound = options["max_side"];
  if (!bound.contains("side") || !bound["side"].is_number_unsigned()) return "";
  const uint64_t max_side = bound["side"].get<uint64_t>();
  const bool short_side = bound.value("of", std::string("long")) == "short";
  uint32_t width = decoded.width, height = decoded.height;
  if (SniffImageFormat(image) == ImageFormat::kJpeg && JpegExifOrientation(image) >= 5) std::swap(width, height);
  const uint32_t side = short_side ? std::min(width, height) : std::max(width, height);
  if (side <= max_side) return "";
  return "image is " + std::to_string(width) + "x" + std::to_string(height) +
         " as shown, over the dataset's bound of " + std::to_string(max_side) + " pixels on its " +
         (short_side ? "short" : "long") + " side (pack --max-side)";
}

}  // namespace shardpack
