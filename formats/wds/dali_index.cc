#include "formats/wds/dali_index.h"

#include <charconv>
#include <sstream>

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

Status ParseDaliIndex(std::string_view text, std::vector<DaliIndexSample>* samples) {
  samples->clear();
  std::istringstream in{std::string(text)};
  std::string line;
  auto bad = [](size_t n, const std::string& why) {
    return Status::DataLoss("DALI index line " + std::to_string(n) + ": " + why);
  };
  if (!std::getline(in, line)) return bad(1, "empty file");
  std::istringstream head(line);
  std::string version;
  uint64_t count = 0;
  if (!(head >> version >> count) || version != kDaliIndexVersion) {
    return bad(1, "expected '" + std::string(kDaliIndexVersion) + " <samples>'");
  }
  size_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream fields(line);
    DaliIndexSample sample;
    DaliIndexMember m;
    while (fields >> m.ext) {
      if (!(fields >> m.offset >> m.size >> m.name)) return bad(line_no, "incomplete member entry");
      sample.push_back(m);
    }
    if (sample.empty()) return bad(line_no, "no members");
    samples->push_back(std::move(sample));
  }
  if (samples->size() != count) {
    return bad(1, "header says " + std::to_string(count) + " samples, file lists " + std::to_string(samples->size()));
  }
  return Status::OK();
}

}  // namespace shardpack
