// PackInput: where the pack pipeline's samples come from. A folder tree or list of image files
// (pack), or the samples of an existing dataset (convert).
//
// The pipeline calls Next() from its serial first stage, in order, and Load() from its parallel
// stage. Inputs that stream (tar shards, LMDB cursors) fill the bytes in Next(); file inputs leave
// that to Load(), so that files are read in parallel.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "formats/common/dataset_writer.h"
#include "shardpack/image.h"
#include "shardpack/manifest.h"
#include "shardpack/status.h"

namespace shardpack {

// One sample in flight through the pipeline. Slots are reused, so buffers keep their capacity.
struct PackItem {
  size_t position = 0;      // in pack order
  std::string relpath;      // where it came from, for reports and metadata
  std::string report_name;  // how skip reports name it, when not by relpath (a written sample's key)
  int32_t label = -1;
  std::string key;                          // empty: the pipeline assigns the index key
  nlohmann::json extra;                     // metadata carried over from a converted dataset; null when none
  std::string bytes;                        // the encoded image
  std::vector<SampleField> fields;          // its other files, sorted by name (Load() fills the data)
  std::vector<std::string> field_relpaths;  // file inputs: where Load() reads each of `fields`
  std::optional<uint64_t> bytes_xxh64;      // of `bytes`, for formats that record it per sample
  bool loaded = false;                      // bytes filled by Next()
  ImageInfo info;
  ImageInfo original;             // pack --max-side re-encoded the image: its info before; else zeros
  int orientation = 1;            // EXIF orientation of `bytes` as packed (1-8; a re-encoded image: 1)
  bool cmyk_to_rgb = false;       // ... and it was a CMYK JPEG, now RGB
  DecodedImage pixels;            // raw format: decoded and transformed
  std::vector<SampleMask> masks;  // raw format: its mask fields, cut as `pixels` was
  Status status;                  // a problem with this sample: it is skipped and reported
};

// Why a sample's field is listed as not packed when the output format keeps no fields.
inline constexpr const char* kFieldsNotStored =
    "not packed: this output format does not keep this file (raw keeps txt and json fields and image masks "
    "besides the pixels; --format wds or lmdb keeps every file)";

class PackInput {
 public:
  virtual ~PackInput() = default;
  virtual const std::vector<std::string>& class_names() const = 0;
  virtual std::vector<std::string> empty_classes() const { return {}; }
  // Inputs found unusable before the pipeline started (scan-time skips).
  virtual std::vector<SkippedFile> initial_skips() const { return {}; }
  // Called once before anything else by the pipeline: whether the output format stores a
  // sample's files besides its image (Format::stores_fields). When it does not, the input leaves
  // PackItem::fields empty and reports the files it would have put there.
  virtual void KeepFields(bool keep) { (void)keep; }
  // How many samples to expect, for progress; 0 when unknown.
  virtual uint64_t expected() const = 0;
  // Fills the identity of the next sample (and its bytes for streaming inputs); *done at the end.
  // An error stops the pack (a malformed input dataset); a problem with one sample goes into
  // item->status instead.
  virtual Status Next(PackItem* item, bool* done) = 0;
  // Reads the bytes of an item that Next() left unloaded. Thread-safe.
  virtual Status Load(PackItem* item) const {
    (void)item;
    return Status::OK();
  }
};

}  // namespace shardpack
