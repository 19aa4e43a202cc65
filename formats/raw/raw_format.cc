#include "formats/raw/raw_format.h"

#include <cstdio>
#include <cstring>
#include <utility>

#include "ground/sample_keys.h"

namespace shardpack {

std::string NpyHeader(const std::string& descr, const std::vector<uint64_t>& shape) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";  // a Python 1-tuple
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t prefix = 10;  // magic (6), version (2), header length (2)
  std::string header("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(kNpyHeaderBytes - prefix);
  header.push_back(static_cast<char>(len & 0xFF));
  header.push_back(static_cast<char>(len >> 8));
  header += dict;
  header.resize(kNpyHeaderBytes - 1, ' ');
  header.push_back('\n');
  return header;
}

Status ParseNpyHeader(std::string_view bytes, NpyInfo* info) {
  *info = NpyInfo();
  if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6)) {
    return Status::DataLoss("not an .npy file (bad magic)");
  }
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  uint64_t len, start;
  if (p[6] == 1) {
    len = p[8] | (uint64_t(p[9]) << 8);
    start = 10;
  } else if (p[6] == 2 || p[6] == 3) {
    if (bytes.size() < 12) return Status::DataLoss(".npy header cut short");
    len = p[8] | (uint64_t(p[9]) << 8) | (uint64_t(p[10]) << 16) | (uint64_t(p[11]) << 24);
    start = 12;
  } else {
    return Status::DataLoss(".npy version " + std::to_string(p[6]) + " is not supported");
  }
  if (start + len > bytes.size()) return Status::DataLoss(".npy header cut short");
  const std::string dict(bytes.substr(start, len));
  info->data_offset = start + len;
  auto value_after = [&](const std::string& key) -> std::string {
    size_t k = dict.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t colon = dict.find(':', k);
    if (colon == std::string::npos) return "";
    size_t v = dict.find_first_not_of(' ', colon + 1);
    return v == std::string::npos ? "" : dict.substr(v);
  };
  std::string descr = value_after("descr");
  if (descr.size() < 3 || descr[0] != '\'' || descr.find('\'', 1) == std::string::npos) {
    return Status::DataLoss(".npy header has no descr");
  }
  info->descr = descr.substr(1, descr.find('\'', 1) - 1);
  info->fortran_order = value_after("fortran_order").rfind("True", 0) == 0;
  std::string shape = value_after("shape");
  if (shape.empty() || shape[0] != '(' || shape.find(')') == std::string::npos) {
    return Status::DataLoss(".npy header has no shape");
  }
  shape = shape.substr(1, shape.find(')') - 1);
  size_t pos = 0;
  while (pos < shape.size()) {
    size_t comma = shape.find(',', pos);
    std::string part = shape.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (!part.empty()) {
      if (part.find_first_not_of("0123456789") != std::string::npos || part.size() > 18) {
        return Status::DataLoss(".npy shape is malformed");
      }
      info->shape.push_back(std::stoull(part));
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return Status::OK();
}

std::string NpyInt32Body(const std::vector<int32_t>& values) {
  std::string out(values.size() * 4, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    const uint32_t v = static_cast<uint32_t>(values[i]);
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<char>((v >> (8 * b)) & 0xFF);
  }
  return out;
}

Status ParseRawChunkIndex(std::string_view npy, uint64_t shard_bytes, std::vector<int64_t>* offsets) {
  offsets->clear();
  NpyInfo info;
  SHARDPACK_RETURN_IF_ERROR(ParseNpyHeader(npy, &info));
  // The shape comes from the file: compare sizes by division so that a huge count cannot wrap.
  if (info.descr != "<i8" || info.fortran_order || info.shape.size() != 1 || npy.size() < info.data_offset ||
      (npy.size() - info.data_offset) % 8 != 0 || (npy.size() - info.data_offset) / 8 != info.shape[0]) {
    return Status::DataLoss("not an int64 array of chunk offsets");
  }
  offsets->resize(info.shape[0]);
  for (size_t c = 0; c < offsets->size(); ++c) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | static_cast<unsigned char>(npy[info.data_offset + c * 8 + b]);
    const int64_t offset = static_cast<int64_t>(v);
    if (offset < 0 || uint64_t(offset) > shard_bytes || (c > 0 && offset < (*offsets)[c - 1])) {
      offsets->clear();
      return Status::DataLoss("chunk offset " + std::to_string(offset) +
                              " is out of order or past the end of the shard (" + std::to_string(shard_bytes) +
                              " bytes)");
    }
    (*offsets)[c] = offset;
  }
  return Status::OK();
}

std::string NpyInt64Body(const std::vector<int64_t>& values) {
  std::string out(values.size() * 8, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    const uint64_t v = static_cast<uint64_t>(values[i]);
    for (int b = 0; b < 8; ++b) out[i * 8 + b] = static_cast<char>((v >> (8 * b)) & 0xFF);
  }
  return out;
}

std::string RawShardFileName(const std::string& prefix, uint64_t index, bool compressed) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "-%06llu.%s", static_cast<unsigned long long>(index), compressed ? "zst" : "npy");
  return prefix + buf;
}

std::string RawSideFileName(const std::string& shard_file, const std::string& suffix) {
  return shard_file.substr(0, shard_file.size() - 4) + suffix;
}

std::string RawMaskFileName(const std::string& shard_file, const std::string& field) {
  return RawSideFileName(shard_file, "." + field + ".npy");
}

std::string RawMaskPresenceFileName(const std::string& shard_file, const std::string& field) {
  return RawSideFileName(shard_file, "." + field + ".present.npy");
}

RawMaskFile ParseRawMaskFileName(const std::string& shard_file, const std::string& side_file, std::string* field) {
  field->clear();
  const std::string stem = RawSideFileName(shard_file, ".");
  if (side_file.size() <= stem.size() || side_file.compare(0, stem.size(), stem) != 0) return RawMaskFile::kNone;
  for (const auto& [suffix, kind] : {std::pair<std::string, RawMaskFile>{".present.npy", RawMaskFile::kPresence},
                                     std::pair<std::string, RawMaskFile>{".npy", RawMaskFile::kArray}}) {
    if (side_file.size() <= stem.size() + suffix.size() ||
        side_file.compare(side_file.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    std::string name = side_file.substr(stem.size(), side_file.size() - stem.size() - suffix.size());
    if (!IsImageFieldKind(FieldKind(name))) continue;  // "labels", "offsets", ...: not a mask's
    *field = std::move(name);
    return kind;
  }
  return RawMaskFile::kNone;
}

}  // namespace shardpack
