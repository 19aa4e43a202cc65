// Sample keys: the name every member of a sample shares in a WebDataset shard ("<key>.<ext>").
//
// Two properties hold for every scheme, because readers depend on them: a key contains no '.'
// (WebDataset splits key from extension at the first dot of the member's base name) and no '/',
// and keys are unique within a dataset. Keys are at most kMaxKeyLength bytes so that
// "<key>.<longest extension>" fits the 100-byte ustar name field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardpack {

inline constexpr size_t kMaxKeyLength = 90;

// Field names (a sample's other files: "txt", "json", "seg.png") are 1 to kMaxFieldNameLength
// bytes of [A-Za-z0-9_.-], neither starting nor ending with '.' and without "..". A member name
// "<key>.<field>" must still fit in 100 bytes; the pack pipeline skips a sample whose would not.
inline constexpr size_t kMaxFieldNameLength = 16;
inline constexpr size_t kMaxMemberNameLength = 100;

// Empty when `name` is a valid field name, else why not (for a skip report).
std::string FieldNameProblem(const std::string& name);
// What a field holds, by its last extension, lower case: "png" of "seg.png", "txt" of "TXT".
std::string FieldKind(const std::string& name);
// Whether a field of this kind is an image (jpg, jpeg, png, webp, bmp): a mask, which must have
// its sample's image's size.
bool IsImageFieldKind(const std::string& kind);

enum class KeyScheme {
  kIndex,  // the zero-padded global sample index: "000000042"
  kPath,   // derived from the relative source path: "n01440764_n01440764_10026"
};

// Index key with at least 9 digits (so keys sort in sample order up to a billion samples).
std::string IndexKey(uint64_t index);

// Turns a relative path into a key: drops the file's extension, maps every byte outside
// [A-Za-z0-9_-] to '_', and shortens long results to a prefix plus a hash of the whole path.
std::string SanitizedPathKey(const std::string& relpath);

// Path keys for `relpaths` (in pack order), made unique by appending "_2", "_3", ... to later
// duplicates. Deterministic for a given input order.
std::vector<std::string> UniquePathKeys(const std::vector<std::string>& relpaths);

}  // namespace shardpack
