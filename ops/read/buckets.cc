#include "shardpack/buckets.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <utility>

namespace shardpack {
namespace {

// A whole decimal number, all of `text`.
bool ParseUint(const std::string& text, uint64_t* value) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), *value);
  return !text.empty() && r.ec == std::errc() && r.ptr == text.data() + text.size();
}

// The SDXL paper's training resolutions (Podell et al. 2023, appendix), width x height, about 1024^2
// pixels each in 64-pixel steps, from 2048x512 to 512x2048.
constexpr Bucket kSdxlBuckets[] = {
    {512, 2048}, {512, 1984}, {512, 1920}, {512, 1856}, {576, 1792}, {576, 1728}, {576, 1664},
    {640, 1600}, {640, 1536}, {704, 1472}, {704, 1408}, {704, 1344}, {768, 1344}, {768, 1280},
    {832, 1216}, {832, 1152}, {896, 1152}, {896, 1088}, {960, 1088}, {960, 1024}, {1024, 1024},
    {1024, 960}, {1088, 960}, {1088, 896}, {1152, 896}, {1152, 832}, {1216, 832}, {1280, 768},
    {1344, 768}, {1344, 704}, {1408, 704}, {1472, 704}, {1536, 640}, {1600, 640}, {1664, 576},
    {1728, 576}, {1792, 576}, {1856, 512}, {1920, 512}, {1984, 512}, {2048, 512},
};

constexpr uint32_t kMaxSide = 1 << 16;  // far above any training resolution; keeps areas in 64 bits

// "1024x768" -> 1024, 768; false unless both are whole numbers.
bool ParseSize(const std::string& text, uint32_t* width, uint32_t* height) {
  const size_t x = text.find('x');
  if (x == std::string::npos) return false;
  uint64_t w = 0, h = 0;
  if (!ParseUint(text.substr(0, x), &w) || !ParseUint(text.substr(x + 1), &h)) return false;
  if (w > kMaxSide || h > kMaxSide) return false;
  *width = uint32_t(w), *height = uint32_t(h);
  return true;
}

std::vector<std::string> SplitOn(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

Status ParseRule(const std::string& spec, const std::string& option, BucketRule* rule) {
  const std::string form = " (a rule is area=WxH,step=S,min=A,max=B, optionally max-ratio=R)";
  bool area = false, step = false, min = false, max = false;
  for (const std::string& part : SplitOn(spec, ',')) {
    const size_t eq = part.find('=');
    const std::string key = part.substr(0, eq), value = eq == std::string::npos ? "" : part.substr(eq + 1);
    uint64_t n = 0;
    const bool number = ParseUint(value, &n) && n > 0 && n <= kMaxSide;
    if ((key == "step" || key == "min" || key == "max") && !number) {
      return Status::InvalidArgument(option + ": " + part + ": " + key + " takes a whole number of pixels from 1 to " +
                                     std::to_string(kMaxSide));
    }
    if (key == "area") {
      if (!ParseSize(value, &rule->area_width, &rule->area_height) || rule->area_width == 0 || rule->area_height == 0) {
        return Status::InvalidArgument(option + ": " + part + ": area takes WIDTHxHEIGHT, e.g. area=1024x1024");
      }
      area = true;
    } else if (key == "step") {
      rule->step = uint32_t(n), step = true;
    } else if (key == "min") {
      rule->min_side = uint32_t(n), min = true;
    } else if (key == "max") {
      rule->max_side = uint32_t(n), max = true;
    } else if (key == "max-ratio") {
      char* end = nullptr;
      rule->max_ratio = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(rule->max_ratio >= 1) || !std::isfinite(rule->max_ratio)) {
        return Status::InvalidArgument(option + ": max-ratio=" + value + " is not a ratio of at least 1");
      }
    } else {
      return Status::InvalidArgument(option + ": '" + part + "' is not a rule's part" + form);
    }
  }
  if (!area || !step || !min || !max) return Status::InvalidArgument(option + ": the rule lacks a part" + form);
  if (rule->min_side > rule->max_side) {
    return Status::InvalidArgument(option + ": min=" + std::to_string(rule->min_side) +
                                   " is above max=" + std::to_string(rule->max_side));
  }
  for (uint32_t v : {rule->area_width, rule->area_height, rule->min_side, rule->max_side}) {
    if (v % rule->step != 0) {
      return Status::InvalidArgument(option + ": step=" + std::to_string(rule->step) + " does not divide " +
                                     std::to_string(v) + ": every side of the rule is a whole number of steps");
    }
  }
  return Status::OK();
}

}  // namespace

std::vector<Bucket> MakeBuckets(const BucketRule& rule) {
  const uint64_t d = rule.step;
  const uint64_t blocks = (rule.area_width / d) * (rule.area_height / d);
  std::set<std::pair<uint32_t, uint32_t>> made;
  const auto square = uint32_t(uint64_t(std::sqrt(double(blocks))) * d);
  made.insert({square, square});
  for (uint64_t side = rule.min_side; side <= rule.max_side; side += d) {
    const auto other = uint32_t(std::min<uint64_t>(rule.max_side, blocks / (side / d) * d));
    made.insert({uint32_t(side), other});
    made.insert({other, uint32_t(side)});
  }
  std::vector<Bucket> buckets;
  for (const auto& [w, h] : made) {
    const double ratio = double(std::max(w, h)) / double(std::min(w, h));
    if (w == 0 || h == 0 || (rule.max_ratio > 0 && ratio > rule.max_ratio)) continue;
    buckets.push_back({w, h});
  }
  return buckets;
}

Status ParseBuckets(const std::string& spec, const std::string& option, std::vector<Bucket>* buckets) {
  buckets->clear();
  const std::string forms =
      " (a preset: sdxl; a list: 1024x1024,1152x896,...; or a rule: area=1024x1024,step=64,"
      "min=512,max=2048)";
  if (spec.empty()) return Status::InvalidArgument(option + ": no buckets given" + forms);
  std::string lower = spec;  // a preset's name in any case: SDXL, Sdxl
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "sdxl") {
    buckets->assign(std::begin(kSdxlBuckets), std::end(kSdxlBuckets));
    return Status::OK();
  }
  if (spec.find('=') != std::string::npos) {
    BucketRule rule;
    SHARDPACK_RETURN_IF_ERROR(ParseRule(spec, option, &rule));
    *buckets = MakeBuckets(rule);
    if (buckets->empty()) return Status::InvalidArgument(option + ": the rule makes no bucket within max-ratio");
    return Status::OK();
  }
  for (const std::string& part : SplitOn(spec, ',')) {
    Bucket b;
    if (!ParseSize(part, &b.width, &b.height)) {
      buckets->clear();
      const bool word = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) != 0;
      });
      return Status::InvalidArgument(option + ": '" + part + "' is " +
                                     (word ? "not a preset" : "not a size WIDTHxHEIGHT") + forms);
    }
    if (b.width == 0 || b.height == 0) {
      buckets->clear();
      return Status::InvalidArgument(option + ": bucket " + part + " has a side of 0 pixels");
    }
    if (std::find(buckets->begin(), buckets->end(), b) == buckets->end()) buckets->push_back(b);
  }
  return Status::OK();
}

size_t NearestBucket(const std::vector<Bucket>& buckets, uint32_t width, uint32_t height) {
  return NearestBucketFinder(buckets)(width, height);
}

NearestBucketFinder::NearestBucketFinder(const std::vector<Bucket>& buckets) {
  std::vector<std::pair<double, size_t>> by_aspect;  // (log aspect, index): sorted, the first listed first
  for (size_t i = 0; i < buckets.size(); ++i)
    by_aspect.emplace_back(std::log(double(buckets[i].width) / double(buckets[i].height)), i);
  std::sort(by_aspect.begin(), by_aspect.end());
  for (const auto& [aspect, index] : by_aspect) {
    if (!log_aspects_.empty() && log_aspects_.back() == aspect) continue;
    log_aspects_.push_back(aspect);
    first_listed_.push_back(index);
  }
}

// The scan's answer is the first listed of the buckets at the least distance |aspect - v|, as the
// computer rounds it. That distance does not rise towards `aspect` from either side (rounding keeps
// order), so the least lies at the values either side of where `aspect` would sort; values further
// out can only tie with them (where rounding makes two differences equal), and are looked at while
// they do.
size_t NearestBucketFinder::operator()(uint32_t width, uint32_t height) const {
  if (log_aspects_.empty()) return 0;
  const double aspect = std::log(double(width) / double(height));
  const auto distance = [&](size_t i) { return std::fabs(aspect - log_aspects_[i]); };
  const size_t above =
      size_t(std::lower_bound(log_aspects_.begin(), log_aspects_.end(), aspect) - log_aspects_.begin());
  double least = std::numeric_limits<double>::infinity();
  if (above < log_aspects_.size()) least = distance(above);
  if (above > 0) least = std::min(least, distance(above - 1));
  size_t best = std::numeric_limits<size_t>::max();
  for (size_t i = above; i < log_aspects_.size() && distance(i) == least; ++i) best = std::min(best, first_listed_[i]);
  for (size_t i = above; i > 0 && distance(i - 1) == least; --i) best = std::min(best, first_listed_[i - 1]);
  return best;
}

BucketChooser::BucketChooser(const std::vector<Bucket>& buckets, BucketChoice choice)
    : buckets_(buckets), choice_(choice), nearest_(buckets) {}

size_t BucketChooser::operator()(uint32_t width, uint32_t height) const {
  if (std::min(width, height) < choice_.min_side) return kNoBucket;
  const size_t nearest = nearest_(width, height);
  const auto covers = [&](const Bucket& b) { return b.width <= width && b.height <= height; };
  if (!choice_.no_upscale || buckets_.empty() || covers(buckets_[nearest])) return nearest;
  // The nearest does not fit inside the image: a scan of those that do, by the same distance as the
  // finder's (its log aspects), the first listed on a tie.
  const double aspect = std::log(double(width) / double(height));
  size_t best = kNoBucket;
  double least = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (!covers(buckets_[i])) continue;
    const double d = std::fabs(aspect - std::log(double(buckets_[i].width) / double(buckets_[i].height)));
    if (d < least) least = d, best = i;
  }
  return best;
}

double CoverScale(const Bucket& bucket, uint32_t width, uint32_t height) {
  return std::max(double(bucket.width) / width, double(bucket.height) / height);
}

double CroppedShare(const Bucket& bucket, uint32_t width, uint32_t height) {
  const double scale = CoverScale(bucket, width, height);
  return 1 - (double(bucket.width) * bucket.height) / (width * scale * height * scale);
}

Bucket PatchedSize(uint32_t width, uint32_t height, uint32_t max_side, uint32_t patch) {
  // In whole numbers, so that the longer side lands on max_side exactly: the shorter is scaled by
  // max_side / longer, rounded down.
  const uint64_t longer = std::max(width, height);
  const uint64_t target = max_side == 0 ? longer : std::min<uint64_t>(longer, max_side);
  const auto fit = [&](uint64_t side) {
    const uint64_t scaled = side * target / longer;
    return uint32_t(std::max<uint64_t>(patch, scaled / patch * patch));
  };
  return {fit(width), fit(height)};
}

uint64_t LargestBucketPixels(const std::vector<Bucket>& buckets) {
  uint64_t most = 0;
  for (const Bucket& b : buckets) most = std::max(most, uint64_t(b.width) * b.height);
  return most;
}

Status ParseBucketTail(const std::string& text, const std::string& option, BucketTail* tail) {
  for (const BucketTail t : {BucketTail::kDrop, BucketTail::kPartial, BucketTail::kPad}) {
    if (text == BucketTailName(t)) {
      *tail = t;
      return Status::OK();
    }
  }
  return Status::InvalidArgument(option + " takes drop, partial or pad, not '" + text + "'");
}

const char* BucketTailName(BucketTail tail) {
  switch (tail) {
    case BucketTail::kDrop:
      return "drop";
    case BucketTail::kPartial:
      return "partial";
    case BucketTail::kPad:
      return "pad";
  }
  return "?";
}

}  // namespace shardpack
