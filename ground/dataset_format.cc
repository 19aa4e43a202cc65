#include "shardpack/dataset_format.h"

#include <string>

namespace shardpack {
namespace {

struct NamedFormat {
  DatasetFormat format;
  const char* name;
};

// The names, in the order help texts list them. A new format adds its line here and its Format
// implementation to formats/registry/ (docs/architecture.md, "Adding a format").
constexpr NamedFormat kFormatNames[] = {
    {DatasetFormat::kWebDataset, "wds"},
    {DatasetFormat::kLmdb, "lmdb"},
    {DatasetFormat::kRaw, "raw"},
};

// Formats shardpack reads (in place, and as convert's input) but never writes: --format and a
// manifest.json never name them, and the lists of names above leave them out.
constexpr NamedFormat kReadOnlyFormatNames[] = {
    {DatasetFormat::kMds, "mds"},
    {DatasetFormat::kLitData, "litdata"},
    {DatasetFormat::kParquet, "parquet"},
};

}  // namespace

std::string_view DatasetFormatName(DatasetFormat format) {
  for (const NamedFormat& n : kFormatNames) {
    if (n.format == format) return n.name;
  }
  for (const NamedFormat& n : kReadOnlyFormatNames) {
    if (n.format == format) return n.name;
  }
  return "?";
}

Status ParseDatasetFormat(std::string_view name, DatasetFormat* format) {
  for (const NamedFormat& n : kFormatNames) {
    if (n.name == name) {
      *format = n.format;
      return Status::OK();
    }
  }
  for (const NamedFormat& n : kReadOnlyFormatNames) {
    if (n.name == name) {
      return Status::InvalidArgument("shardpack reads '" + std::string(name) +
                                     "' datasets (in place, and convert takes them) but does not write them; use " +
                                     DatasetFormatNames());
    }
  }
  return Status::InvalidArgument("unknown format '" + std::string(name) + "'; use " + DatasetFormatNames());
}

std::string DatasetFormatNames(std::string_view last_separator) {
  std::string names;
  const size_t count = std::size(kFormatNames);
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) names += i + 1 == count ? std::string(last_separator) : std::string(", ");
    names += kFormatNames[i].name;
  }
  return names;
}

std::string_view RawCompressionName(RawCompression compression) {
  return compression == RawCompression::kZstd ? "zstd" : "none";
}

Status ParseRawCompression(std::string_view name, RawCompression* compression) {
  for (RawCompression c : {RawCompression::kNone, RawCompression::kZstd}) {
    if (RawCompressionName(c) == name) {
      *compression = c;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown compression '" + std::string(name) + "'; use none or zstd");
}

}  // namespace shardpack
