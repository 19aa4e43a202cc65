#include "formats/tfrecord/tfrecord_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "ground/crc32c.h"
#include "ground/little_endian.h"

namespace shardpack {
namespace {

// Inflates a gzip stream (several members too, as `cat a.gz b.gz` makes) up to max_bytes.
Status Gunzip(const std::string& path, std::string_view in, uint64_t max_bytes, std::string* out) {
  z_stream z;
  std::memset(&z, 0, sizeof(z));
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return Status::IOError(path + ": zlib could not start");
  size_t fed = 0;  // input handed to zlib so far (avail_in is 32 bits: fed in pieces)
  const auto feed = [&] {
    const size_t piece = std::min<size_t>(in.size() - fed, 1u << 30);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + fed));
    z.avail_in = static_cast<uInt>(piece);
    fed += piece;
  };
  const auto fail = [&](const std::string& why) {
    inflateEnd(&z);
    return Status::DataLoss(path + ": " + why);
  };
  feed();
  out->clear();
  char buffer[1 << 16];
  while (true) {
    if (z.avail_in == 0 && fed < in.size()) feed();
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof(buffer);
    const int rc = inflate(&z, Z_NO_FLUSH);
    out->append(buffer, sizeof(buffer) - z.avail_out);
    if (out->size() > max_bytes) {
      return fail("inflates to more than " + std::to_string(max_bytes) + " bytes (the bound on one input file)");
    }
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0 && fed == in.size()) break;
      inflateReset(&z);  // another gzip member follows
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return fail("the gzip stream is damaged (zlib: " + std::string(z.msg != nullptr ? z.msg : "error") + ")");
    }
    if (z.avail_in == 0 && fed == in.size() && z.avail_out != 0) {
      return fail("the gzip stream ends before its end (the file was cut short)");
    }
  }
  inflateEnd(&z);
  return Status::OK();
}

}  // namespace

Status ReadTfRecordFile(Env* env, const std::string& path, uint64_t max_bytes, WholeFile* contents) {
  SHARDPACK_RETURN_IF_ERROR(contents->Map(env, path, max_bytes));
  const std::string_view raw = contents->bytes();
  if (raw.size() >= 2 && static_cast<uint8_t>(raw[0]) == 0x1f && static_cast<uint8_t>(raw[1]) == 0x8b) {
    std::string inflated;
    const Status s = Gunzip(path, raw, max_bytes, &inflated);
    contents->Own(std::move(inflated));
    return s;
  }
  return Status::OK();
}

bool LooksLikeTfRecord(std::string_view contents) {
  return contents.size() >= 12 && MaskCrc32c(Crc32c(contents.substr(0, 8))) == LoadLe32(contents.data() + 8);
}

Status TfRecordReader::Next(std::string_view* record, std::string* damaged, bool* done) {
  damaged->clear();
  *done = offset_ == data_.size();
  if (*done) return Status::OK();
  const std::string where = path_ + ": record " + std::to_string(records_) + " at byte " + std::to_string(offset_);
  if (data_.size() - offset_ < 12) {
    return Status::DataLoss(where + ": the file ends inside the record's header (cut short)");
  }
  const char* header = data_.data() + offset_;
  if (MaskCrc32c(Crc32c(std::string_view(header, 8))) != LoadLe32(header + 8)) {
    return Status::DataLoss(where + ": its length's CRC-32C does not match (damaged, or not a TFRecord file)");
  }
  const uint64_t length = LoadLe64(header);
  if (length > data_.size() - offset_ - 12 || data_.size() - offset_ - 12 - length < 4) {
    return Status::DataLoss(where + ": its " + std::to_string(length) +
                            " bytes of data run past the end of the file (cut short)");
  }
  *record = data_.substr(offset_ + 12, length);
  const uint32_t stored = LoadLe32(data_.data() + offset_ + 12 + length);
  offset_ += 12 + length + 4;
  ++records_;
  if (MaskCrc32c(Crc32c(*record)) != stored) damaged->assign(where + ": its data's CRC-32C does not match");
  return Status::OK();
}

}  // namespace shardpack
