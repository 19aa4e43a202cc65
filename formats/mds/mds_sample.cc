#include "formats/mds/mds_sample.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "formats/common/bytes_json.h"
#include "formats/common/column_names.h"
#include "ground/little_endian.h"
#include "ground/printable.h"

namespace shardpack {
namespace {

template <typename T>
T LoadLe(std::string_view bytes) {
  T v;
  std::memcpy(&v, bytes.data(), sizeof(T));  // MDS is little-endian, as is every machine shardpack builds for
  return v;
}

// MDS's fixed-size integer encodings (numpy scalars; "int" is int64).
struct IntegerEncoding {
  const char* name;
  size_t bytes;
  bool is_signed;
};
constexpr IntegerEncoding kIntegerEncodings[] = {
    {"int", 8, true},     {"int64", 8, true},   {"int32", 4, true},   {"int16", 2, true},  {"int8", 1, true},
    {"uint64", 8, false}, {"uint32", 4, false}, {"uint16", 2, false}, {"uint8", 1, false},
};

const IntegerEncoding* FindIntegerEncoding(const std::string& e) {
  for (const IntegerEncoding& i : kIntegerEncodings) {
    if (e == i.name) return &i;
  }
  return nullptr;
}

bool IsIntegerEncoding(const std::string& e) { return e == "str_int" || FindIntegerEncoding(e) != nullptr; }

// An integer column's value; false when it is not one (a bad size, text that is not a number).
// *unsigned_over: a uint64 past INT64_MAX (then *out is its bits).
bool IntegerValue(std::string_view v, const std::string& e, int64_t* out, bool* unsigned_over) {
  *unsigned_over = false;
  if (e == "str_int") {
    const std::string text(v);
    char* end = nullptr;
    errno = 0;
    const long long parsed = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || end != text.c_str() + text.size() || errno != 0) return false;
    *out = parsed;
    return true;
  }
  const IntegerEncoding* encoding = FindIntegerEncoding(e);
  if (encoding == nullptr || v.size() != encoding->bytes) return false;
  uint64_t bits = 0;
  for (size_t i = encoding->bytes; i-- > 0;) bits = bits << 8 | static_cast<uint8_t>(v[i]);
  const int unused = int(64 - 8 * encoding->bytes);
  if (encoding->is_signed && unused > 0) {
    *out = static_cast<int64_t>(bits << unused) >> unused;  // sign-extended
  } else {
    *out = static_cast<int64_t>(bits);
    *unsigned_over = !encoding->is_signed && bits > uint64_t(INT64_MAX);
  }
  return true;
}

// A float column's value as JSON; null when it is not one.
nlohmann::json FloatValue(std::string_view v, const std::string& e) {
  if (e == "float32" && v.size() == 4) return LoadLe<float>(v);
  if (e == "float64" && v.size() == 8) return LoadLe<double>(v);
  if (e == "float16" && v.size() == 2) {
    // IEEE half: sign, 5 exponent bits, 10 fraction bits.
    const uint16_t h = LoadLe<uint16_t>(v);
    const int exponent = (h >> 10) & 31, fraction = h & 1023;
    double value = exponent == 0    ? std::ldexp(fraction, -24)
                   : exponent == 31 ? (fraction ? NAN : INFINITY)
                                    : std::ldexp(1024 + fraction, exponent - 25);
    if (std::isnan(value) || std::isinf(value)) return Base64(v);
    return (h & 0x8000) ? -value : value;
  }
  if (e == "str_float") {
    const std::string text(v);
    char* end = nullptr;
    const double parsed = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(parsed)) return parsed;
  }
  return nullptr;
}

// A column that is neither the image nor the label, as its field's JSON value.
nlohmann::json FieldJson(std::string_view v, const std::string& e) {
  int64_t i = 0;
  bool over = false;
  if (IntegerValue(v, e, &i, &over)) {
    if (over) return LoadLe<uint64_t>(v);
    return i;
  }
  if (nlohmann::json f = FloatValue(v, e); !f.is_null()) return f;
  if (e == "bool" && v.size() == 1) return v[0] != 0;  // LitData's booleans
  if (e == "str" || e == "str_decimal") return BytesJson(v);
  if (e == "json") {
    nlohmann::json parsed = nlohmann::json::parse(v, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) return parsed;
  }
  // Bytes, arrays, pickles, image lists, and anything malformed: kept whole, with its encoding.
  return {{"mds_encoding", e}, {"base64", Base64(v)}};
}

Status PilPixels(std::string_view v, uint64_t max_pixels, DecodedImage* out) {
  if (v.size() < 12) return Status::Corrupt("its pil image is " + std::to_string(v.size()) + " bytes, under a header");
  const uint32_t width = LoadLe32(v.data()), height = LoadLe32(v.data() + 4), mode_size = LoadLe32(v.data() + 8);
  if (mode_size > 16 || v.size() < 12 + uint64_t(mode_size)) return Status::Corrupt("its pil image's mode is damaged");
  const std::string mode(v.substr(12, mode_size));
  const std::string_view raw = v.substr(12 + mode_size);
  const int channels = mode == "RGB" ? 3 : mode == "RGBA" ? 4 : mode == "L" ? 1 : 0;
  if (channels == 0) {
    return Status::Unsupported("its pil image has mode " + Printable(mode) +
                               "; shardpack reads pil images of mode RGB, RGBA and L");
  }
  const uint64_t pixels = uint64_t(width) * height;
  if (width == 0 || height == 0 || pixels > max_pixels) {
    return Status::Corrupt("its pil image is " + std::to_string(width) + "x" + std::to_string(height) +
                           " (allowed: 1 to " + std::to_string(max_pixels) + " pixels)");
  }
  if (raw.size() != pixels * channels) {
    return Status::Corrupt("its pil image of " + std::to_string(width) + "x" + std::to_string(height) + " " + mode +
                           " holds " + std::to_string(raw.size()) + " bytes, not " + std::to_string(pixels * channels));
  }
  out->width = width;
  out->height = height;
  out->rgb.resize(pixels * 3);
  const auto* in = reinterpret_cast<const uint8_t*>(raw.data());
  for (uint64_t p = 0; p < pixels; ++p) {
    for (int c = 0; c < 3; ++c) out->rgb[p * 3 + c] = in[p * channels + (channels == 1 ? 0 : c)];
  }
  return Status::OK();
}

}  // namespace

Status MdsShardView::Open(std::string_view data, uint64_t samples, const std::string& path, MdsShardView* view) {
  if (data.size() < MdsHeaderBytes(samples) || data.size() >= kMaxMdsShardBytes) {
    return Status::DataLoss(path + ": " + std::to_string(data.size()) + " bytes cannot hold the header of " +
                            std::to_string(samples) + " samples (index.json's count)");
  }
  if (LoadLe32(data.data()) != samples) {
    return Status::DataLoss(path + ": its header says " + std::to_string(LoadLe32(data.data())) +
                            " samples, index.json " + std::to_string(samples));
  }
  uint32_t last = 0;
  for (uint64_t i = 0; i <= samples; ++i) {
    const uint32_t offset = LoadLe32(data.data() + 4 * (i + 1));
    if (offset < MdsHeaderBytes(samples) || offset > data.size() || offset < last) {
      return Status::DataLoss(path + ": offset " + std::to_string(i) + " (" + std::to_string(offset) +
                              ") is outside the shard's samples or before the one before it");
    }
    last = offset;
  }
  view->data_ = data;
  view->samples_ = samples;
  return Status::OK();
}

std::string_view MdsShardView::sample(uint64_t i) const {
  const uint32_t begin = LoadLe32(data_.data() + 4 * (i + 1)), end = LoadLe32(data_.data() + 4 * (i + 2));
  return data_.substr(begin, end - begin);
}

bool MdsSampleRangeValid(uint32_t begin, uint32_t end, uint64_t samples, uint64_t raw_bytes) {
  return begin >= MdsHeaderBytes(samples) && begin <= end && end <= raw_bytes;
}

Status ChooseMdsLayout(const std::vector<MdsColumn>& columns, const std::string& where, MdsLayout* layout) {
  *layout = MdsLayout();
  for (size_t c = 0; c < columns.size() && layout->image < 0; ++c) {
    const std::string& e = columns[c].encoding;
    if (e == "jpeg" || e == "png" || e == "pil") {
      layout->image = int(c);
      layout->image_is_pil = e == "pil";
    }
  }
  for (size_t c = 0; c < columns.size() && layout->image < 0; ++c) {
    if (columns[c].encoding == "bytes" && IsImageColumnName(columns[c].name)) layout->image = int(c);
  }
  std::string listed;
  for (const MdsColumn& column : columns) listed += (listed.empty() ? "" : ", ") + column.name + ":" + column.encoding;
  if (layout->image < 0) {
    return Status::InvalidArgument(where + " has no image column (its columns: " + Printable(listed) +
                                   "); shardpack takes the first jpeg, png or pil column, or a bytes column named "
                                   "image, img, jpg, jpeg, png or webp");
  }
  int named = -1, integers = 0, only = -1;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (int(c) == layout->image || !IsIntegerEncoding(columns[c].encoding)) continue;
    ++integers;
    only = int(c);
    if (named < 0 && IsLabelColumnName(columns[c].name)) named = int(c);
  }
  layout->label = named >= 0 ? named : integers == 1 ? only : -1;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (int(c) != layout->image && int(c) != layout->label) layout->fields.push_back(int(c));
  }
  return Status::OK();
}

bool SplitMdsSample(std::string_view sample, const std::vector<MdsColumn>& columns,
                    std::vector<std::string_view>* values, std::string* why) {
  uint64_t at = 0;
  std::vector<uint64_t> sizes;
  sizes.reserve(columns.size());
  for (const MdsColumn& column : columns) {
    if (column.size != 0) {
      sizes.push_back(column.size);
      continue;
    }
    if (at + 4 > sample.size()) {
      *why = "its " + std::to_string(sample.size()) + " bytes end inside the sizes of its columns";
      return false;
    }
    sizes.push_back(LoadLe32(sample.data() + at));
    at += 4;
  }
  values->clear();
  for (size_t c = 0; c < columns.size(); ++c) {
    if (sizes[c] > sample.size() - at) {
      *why = "column " + Printable(columns[c].name) + " of " + std::to_string(sizes[c]) +
             " bytes runs past the sample's end";
      return false;
    }
    values->push_back(sample.substr(at, sizes[c]));
    at += sizes[c];
  }
  if (at != sample.size()) {
    *why = "its columns hold " + std::to_string(at) + " of its " + std::to_string(sample.size()) + " bytes";
    return false;
  }
  return true;
}

Status DecodeMdsSample(const std::vector<std::string_view>& values, const std::vector<MdsColumn>& columns,
                       const MdsLayout& layout, bool want_fields, uint64_t max_pixels, MdsDecoded* out) {
  out->encoded = {};
  out->pixels = DecodedImage();
  out->label = -1;
  out->fields = nlohmann::json::object();
  if (layout.image_is_pil) {
    SHARDPACK_RETURN_IF_ERROR(PilPixels(values[layout.image], max_pixels, &out->pixels));
  } else {
    out->encoded = values[layout.image];
  }
  if (layout.label >= 0) {
    int64_t label = 0;
    bool over = false;
    const MdsColumn& column = columns[layout.label];
    if (!IntegerValue(values[layout.label], column.encoding, &label, &over) || over || label < 0 || label > INT32_MAX) {
      return Status::Corrupt("its " + Printable(column.name) + " is not a label from 0 to 2^31 - 1");
    }
    out->label = int32_t(label);
  }
  if (want_fields) {
    for (const int c : layout.fields) out->fields[columns[c].name] = FieldJson(values[c], columns[c].encoding);
  }
  return Status::OK();
}

}  // namespace shardpack
