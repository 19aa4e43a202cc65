#include "ground/sample_table.h"

#include <algorithm>
#include <charconv>
#include <utility>

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

// How many times `c` occurs in `s`. A 32-bit count, which the compiler vectorises four lanes to a
// register; std::count's 64-bit one takes twice the steps (ParseShownSizes ran 1.7x slower with it:
// shardpack_micro_bench BM_ParseShownSizes).
uint32_t CountOf(std::string_view s, char c) {
  uint32_t n = 0;
  for (const char x : s) n += x == c ? 1 : 0;
  return n;
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

namespace {

// Calls parse(line, version) for each sample line of a whole table, false from it meaning the line
// is malformed; reserve(lines) first. The messages of both whole-table parsers.
template <typename Reserve, typename Parse>
Status ForEachTableLine(std::string_view text, Reserve reserve, Parse parse) {
  const size_t header_end = text.find('\n');
  const int version = header_end == std::string_view::npos ? 0 : SampleTableVersion(text.substr(0, header_end));
  if (version == 0) return Status::DataLoss("sample table does not start with the expected header");
  size_t pos = header_end + 1;
  size_t line_no = 1;
  reserve(size_t(CountOf(text.substr(pos), '\n')));
  while (pos < text.size()) {
    ++line_no;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      return Status::DataLoss("sample table line " + std::to_string(line_no) + " is cut short");
    }
    const bool ok = parse(text.substr(pos, end - pos), version);
    pos = end + 1;
    if (!ok) return Status::DataLoss("sample table line " + std::to_string(line_no) + " is malformed");
  }
  return Status::OK();
}

// Checks what the manifest says of a parsed table: the message of `parsed` with the path, and the
// count of `samples` against the manifest's.
Status CheckReadTable(const std::string& path, const ShardEntry& shard, const Status& parsed, size_t samples) {
  if (!parsed.ok()) return Status::DataLoss(path + ": " + parsed.message() + " (run shardpack verify)");
  if (samples != shard.samples) {
    return Status::DataLoss(path + " lists " + std::to_string(samples) + " samples, the manifest " +
                            std::to_string(shard.samples) + " (run shardpack verify)");
  }
  return Status::OK();
}

}  // namespace

Status ParseSampleTable(std::string_view text, std::vector<SampleRecord>* records) {
  records->clear();
  return ForEachTableLine(
      text, [&](size_t lines) { records->reserve(lines); },
      [&](std::string_view line, int version) {
        SampleRecord r;
        if (!ParseSampleRecord(line, version, &r)) return false;
        records->push_back(std::move(r));
        return true;
      });
}

Status ParseShownSizes(std::string_view text, std::vector<ShownSize>* sizes) {
  sizes->clear();
  return ForEachTableLine(
      text, [&](size_t lines) { sizes->reserve(lines); },
      [&](std::string_view line, int version) {
        const size_t columns = version == 3 ? 11 : version == 2 ? 10 : 8;
        if (CountOf(line, '\t') != columns - 1) return false;
        // The columns from the width on are the line's last: found from its end, the key and the
        // checksum before them are never split.
        std::string_view tail[5];  // width, height, original width and height, orientation
        size_t end = line.size();
        for (size_t i = columns - 6; i-- > 0;) {
          const size_t tab = line.rfind('\t', end - 1);
          tail[i] = line.substr(tab + 1, end - tab - 1);
          end = tab;
        }
        ShownSize size;
        unsigned orientation = 1;
        if (!ParseNumber(tail[0], &size.width) || !ParseNumber(tail[1], &size.height) ||
            (version >= 3 && !(ParseNumber(tail[4], &orientation) && orientation >= 1 && orientation <= 8))) {
          return false;
        }
        if (orientation >= 5) std::swap(size.width, size.height);  // as SampleRecord::shown_width
        sizes->push_back(size);
        return true;
      });
}

Status ReadSampleTable(Env* env, const std::string& dir, const ShardEntry& shard, std::vector<SampleRecord>* records) {
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(ReadSideFile(env, dir, shard.sample_table, &text));
  const Status parsed = ParseSampleTable(text, records);
  return CheckReadTable(JoinPath(dir, shard.sample_table.file), shard, parsed, records->size());
}

Status ReadShownSizes(Env* env, const std::string& dir, const ShardEntry& shard, std::vector<ShownSize>* sizes) {
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(ReadSideFile(env, dir, shard.sample_table, &text));
  const Status parsed = ParseShownSizes(text, sizes);
  return CheckReadTable(JoinPath(dir, shard.sample_table.file), shard, parsed, sizes->size());
}

}  // namespace shardpack
