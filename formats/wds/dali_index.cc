#include "formats/wds/dali_index.h"

#include <algorithm>
#include <charconv>

namespace shardpack {

void DaliIndexBuilder::AddSample(const DaliIndexSample& members) {
  for (size_t i = 0; i < members.size(); ++i) {
    const DaliIndexMember& m = members[i];
    if (i > 0) lines_ += ' ';
    lines_ += m.ext + ' ' + std::to_string(m.offset) + ' ' + std::to_string(m.size) + ' ' + m.name;
  }
  lines_ += '\n';
  ++samples_;
}

std::string DaliIndexBuilder::Contents() const {
  return std::string(kDaliIndexVersion) + " " + std::to_string(samples_) + "\n" + lines_;
}

namespace {

// Whitespace as `>>` skips it in the C locale.
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// The next whitespace-separated token of `line` from *at on; empty at the line's end.
std::string_view NextToken(std::string_view line, size_t* at) {
  while (*at < line.size() && IsSpace(line[*at])) ++*at;
  const size_t begin = *at;
  while (*at < line.size() && !IsSpace(line[*at])) ++*at;
  return line.substr(begin, *at - begin);
}

bool ParseUnsigned(std::string_view token, uint64_t* value) {
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), *value);
  return error == std::errc() && end == token.data() + token.size() && !token.empty();
}

}  // namespace

bool ParseDaliIndexHeader(std::string_view line, uint64_t* samples) {
  size_t at = 0;
  const std::string_view version = NextToken(line, &at);
  return version == kDaliIndexVersion && ParseUnsigned(NextToken(line, &at), samples);
}

Status ParseDaliIndexLine(std::string_view line, std::vector<DaliIndexMemberView>* members) {
  const size_t first = members->size();
  size_t at = 0;
  for (std::string_view ext = NextToken(line, &at); !ext.empty(); ext = NextToken(line, &at)) {
    DaliIndexMemberView m;
    m.ext = ext;
    m.name = (ParseUnsigned(NextToken(line, &at), &m.offset) && ParseUnsigned(NextToken(line, &at), &m.size))
                 ? NextToken(line, &at)
                 : std::string_view();
    if (m.name.empty()) return Status::DataLoss("incomplete member entry");
    members->push_back(m);
  }
  if (members->size() == first) return Status::DataLoss("no members");
  return Status::OK();
}

// Line by line over string_views (no stream: an index of 10,000 samples is parsed each time a
// reader first needs its shard, and istringstream made that most of the cost).
Status ParseDaliIndex(std::string_view text, DaliIndexView* index) {
  index->members.clear();
  index->ends.clear();
  auto bad = [](size_t n, const std::string& why) {
    return Status::DataLoss("DALI index line " + std::to_string(n) + ": " + why);
  };
  size_t pos = 0;
  // The next line without its newline; false past the end (a last line without a newline counts).
  const auto next_line = [&](std::string_view* line) {
    if (pos >= text.size()) return false;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    *line = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  };
  std::string_view line;
  if (!next_line(&line)) return bad(1, "empty file");
  uint64_t count = 0;
  if (!ParseDaliIndexHeader(line, &count)) return bad(1, "expected '" + std::string(kDaliIndexVersion) + " <samples>'");
  // (Reserved for the count the header claims, within what the text could hold.)
  index->ends.reserve(size_t(std::min<uint64_t>(count, text.size() / 8)));
  index->members.reserve(index->ends.capacity() * 3);  // an image, its class, its metadata: most samples
  size_t line_no = 1;
  while (next_line(&line)) {
    ++line_no;
    const Status s = ParseDaliIndexLine(line, &index->members);
    if (!s.ok()) return bad(line_no, s.message());
    index->ends.push_back(uint32_t(index->members.size()));
  }
  if (index->ends.size() != count) {
    return bad(1,
               "header says " + std::to_string(count) + " samples, file lists " + std::to_string(index->ends.size()));
  }
  return Status::OK();
}

Status ParseDaliIndex(std::string_view text, std::vector<DaliIndexSample>* samples) {
  samples->clear();
  DaliIndexView view;
  SHARDPACK_RETURN_IF_ERROR(ParseDaliIndex(text, &view));
  samples->reserve(view.samples());
  for (size_t i = 0; i < view.samples(); ++i) {
    DaliIndexSample sample;
    for (const DaliIndexMemberView* m = view.begin(i); m != view.end(i); ++m) {
      sample.push_back({std::string(m->ext), m->offset, m->size, std::string(m->name)});
    }
    samples->push_back(std::move(sample));
  }
  return Status::OK();
}

}  // namespace shardpack
