#include "ground/sample_table.h"

#include <algorithm>
#include <charconv>

#include "ground/checksum.h"
#include "ground/side_file.h"

namespace shardpack {
namespace {

// Splits `line` at tabs into fields[0, max): the number of fields, or max + 1 when there are more.
// (Into the caller's array: a table of 10,000 lines is parsed whenever its shard is first read.)
size_t SplitTabs(std::string_view line, std::string_view* fields, size_t max) {
  size_t n = 0, start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    if (n == max) return max + 1;
    fields[n++] = line.substr(start, tab == std::string_view::npos ? tab : tab - start);
    if (tab == std::string_view::npos) return n;
    start = tab + 1;
  }
}

template <typename T>
bool ParseNumber(std::string_view s, T* value) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *value);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty();
}

}  // namespace

std::string FormatSampleRecord(const SampleRecord& r, int version) {
  std::string line = r.key;
  line += '\t' + std::to_string(r.offset);
  line += '\t' + std::to_string(r.size);
  line += '\t' + ChecksumHex(r.xxh64);
  line += '\t' + std::to_string(r.label);
  line += '\t';
  line += ImageFormatName(r.format);
  line += '\t' + std::to_string(r.width);
  line += '\t' + std::to_string(r.height);
  if (version >= 2) line += '\t' + std::to_string(r.original_width) + '\t' + std::to_string(r.original_height);
  if (version >= 3) line += '\t' + std::to_string(r.orientation);
  line += '\n';
  return line;
}

std::string FormatSampleTable(const std::vector<SampleRecord>& records, bool original_sizes) {
  const bool turned =
      std::any_of(records.begin(), records.end(), [](const SampleRecord& r) { return r.orientation != 1; });
  const int version = turned ? 3 : original_sizes ? 2 : 1;
  std::string table = version == 3 ? kSampleTableHeaderV3 : version == 2 ? kSampleTableHeaderV2 : kSampleTableHeader;
  for (const SampleRecord& r : records) table += FormatSampleRecord(r, version);
  return table;
}

int SampleTableVersion(std::string_view header_line) {
  for (const auto& [v, h] : {std::pair<int, std::string_view>{1, kSampleTableHeader},
                             {2, kSampleTableHeaderV2},
                             {3, kSampleTableHeaderV3}}) {
    if (header_line.size() + 1 == h.size() && h.substr(0, header_line.size()) == header_line) return v;
  }
  return 0;
}

bool ParseSampleRecord(std::string_view line, int version, SampleRecord* r) {
  const size_t columns = version == 3 ? 11 : version == 2 ? 10 : 8;
  std::string_view f[11];
  const size_t n = SplitTabs(line, f, 11);
  r->original_width = r->original_height = 0;
  unsigned orientation = 1;
  const bool ok = n == columns && !f[0].empty() && ParseNumber(f[1], &r->offset) && ParseNumber(f[2], &r->size) &&
                  ParseChecksumHex(f[3], &r->xxh64) && ParseNumber(f[4], &r->label) && ParseNumber(f[6], &r->width) &&
                  ParseNumber(f[7], &r->height) &&
                  (version < 2 || (ParseNumber(f[8], &r->original_width) && ParseNumber(f[9], &r->original_height))) &&
                  (version < 3 || (ParseNumber(f[10], &orientation) && orientation >= 1 && orientation <= 8));
  if (!ok) return false;
  r->orientation = uint8_t(orientation);
  r->key.assign(f[0]);  // into the record's own buffer: a reader parsing a line a sample reuses one
  r->format = ImageFormatFromExtension(f[5] == "jpeg" ? "jpg" : f[5]);
  return r->format != ImageFormat::kUnknown;
}

Status ParseSampleTable(std::string_view text, std::vector<SampleRecord>* records) {
  records->clear();
  const size_t header_end = text.find('\n');
  const int version = header_end == std::string_view::npos ? 0 : SampleTableVersion(text.substr(0, header_end));
  if (version == 0) return Status::DataLoss("sample table does not start with the expected header");
  size_t pos = header_end + 1;
  size_t line_no = 1;
  records->reserve(size_t(std::count(text.begin() + long(pos), text.end(), '\n')));
  while (pos < text.size()) {
    ++line_no;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      return Status::DataLoss("sample table line " + std::to_string(line_no) + " is cut short");
    }
    SampleRecord r;
    const bool ok = ParseSampleRecord(text.substr(pos, end - pos), version, &r);
    pos = end + 1;
    if (!ok) return Status::DataLoss("sample table line " + std::to_string(line_no) + " is malformed");
    records->push_back(std::move(r));
  }
  return Status::OK();
}

Status ReadSampleTable(Env* env, const std::string& dir, const ShardEntry& shard, std::vector<SampleRecord>* records) {
  const std::string path = JoinPath(dir, shard.sample_table.file);
  const uint64_t expected_samples = shard.samples;
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(ReadSideFile(env, dir, shard.sample_table, &text));
  Status s = ParseSampleTable(text, records);
  if (!s.ok()) return Status::DataLoss(path + ": " + s.message() + " (run shardpack verify)");
  if (records->size() != expected_samples) {
    return Status::DataLoss(path + " lists " + std::to_string(records->size()) + " samples, the manifest " +
                            std::to_string(expected_samples) + " (run shardpack verify)");
  }
  return Status::OK();
}

}  // namespace shardpack
