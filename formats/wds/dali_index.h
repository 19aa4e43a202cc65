// The index file NVIDIA DALI's webdataset reader consumes (the text format of DALI's wds2idx tool),
// written next to each shard as "<shard stem>.idx". Format (docs/formats/dali-index.md):
//   line 1:            "v1.2 <number of samples>"
//   one line a sample: "<ext> <data offset> <size> <member name>" for each member, space-separated
// Offsets are where the member's data starts in the tar file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shardpack/status.h"

namespace shardpack {

inline constexpr char kDaliIndexVersion[] = "v1.2";

struct DaliIndexMember {
  std::string ext;  // the member name after the first dot of its base name ("jpg", "cls")
  uint64_t offset = 0;
  uint64_t size = 0;
  std::string name;  // the full member name
};
using DaliIndexSample = std::vector<DaliIndexMember>;

// Accumulates one shard's index in memory (bounded by samples per shard).
class DaliIndexBuilder {
 public:
  void AddSample(const DaliIndexSample& members);
  // The complete file contents.
  std::string Contents() const;
  uint64_t samples() const { return samples_; }

 private:
  std::string lines_;
  uint64_t samples_ = 0;
};

// Parses an index; DataLoss naming the line on malformed content.
Status ParseDaliIndex(std::string_view text, std::vector<DaliIndexSample>* samples);

// The same parse into one array of members that point into `text` (which must outlive it): sample
// i's members are members[ends[i - 1], ends[i]). No allocation a sample, for the reader that parses
// a shard's index whenever it first reads the shard (issue 39).
struct DaliIndexMemberView {
  std::string_view ext;
  uint64_t offset = 0;
  uint64_t size = 0;
  std::string_view name;
};
struct DaliIndexView {
  std::vector<DaliIndexMemberView> members;
  std::vector<uint32_t> ends;
  size_t samples() const { return ends.size(); }
  const DaliIndexMemberView* begin(size_t i) const { return members.data() + (i == 0 ? 0 : ends[i - 1]); }
  const DaliIndexMemberView* end(size_t i) const { return members.data() + ends[i]; }
};
Status ParseDaliIndex(std::string_view text, DaliIndexView* index);

// The same a line at a time (a reader that reads the line of the sample asked for, LineFile): the
// header line's sample count, false when it is not "v1.2 <samples>"; one sample's line, its members
// appended to *members (pointing into `line`), DataLoss saying what is wrong otherwise ("no
// members", "incomplete member entry").
bool ParseDaliIndexHeader(std::string_view line, uint64_t* samples);
Status ParseDaliIndexLine(std::string_view line, std::vector<DaliIndexMemberView>* members);

}  // namespace shardpack
