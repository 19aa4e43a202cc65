// pack: turns a directory tree of images into a packed dataset.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "shardpack/dataset_format.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"

namespace shardpack {

struct PackProgress {
  uint64_t files_done = 0;  // packed or skipped
  uint64_t files_total = 0;
  uint64_t bytes_read = 0;
  uint64_t samples_packed = 0;
  uint64_t files_skipped = 0;
  double elapsed_seconds = 0;
};

// How a scanned SRC's files form samples (docs/formats/source-layout.md).
enum class SourceLayout {
  kImageNet,  // class folders; files sharing an image's name before the first dot join it as fields
  kSamples,   // no classes: files sharing a name before the first dot form a sample, in any folder
};

struct PackOptions {
  DatasetFormat format = DatasetFormat::kWebDataset;
  std::string list_file;  // pack the files listed here (path<TAB>label) instead of scanning
  SourceLayout layout = SourceLayout::kImageNet;
  std::string prefix = "shard";             // shard file names: "<prefix>-000000.tar", ...
  uint64_t shard_size_bytes = 512'000'000;  // a new shard starts before one would exceed this
  uint64_t samples_per_shard = 100'000;     // ... or once it holds this many samples
  int threads = 0;                          // reader threads; 0 = all cores
  bool shuffle = false;                     // shuffle sample order once, from seed
  uint64_t seed = 0;
  bool path_keys = false;                    // keys from relative paths instead of the index
  bool strict = false;                       // the first bad input fails the pack
  bool decode_check = false;                 // fully decode every image (slow) instead of probing
  uint64_t max_sample_bytes = 256ull << 20;  // larger files are skipped; bounds memory
  uint64_t max_pixels = 178'956'970;         // images declaring more pixels are skipped
  // raw only: decode, resize the shorter side to `resize`, centre-crop to crop_height x crop_width.
  // A fixed-size raw dataset needs the crop; resize defaults to the crop's longer side.
  uint32_t resize = 0;
  uint32_t crop_height = 0;
  uint32_t crop_width = 0;
  // wds and lmdb: a resolution bound (docs/formats/resolution-bound.md). An image whose side as
  // shown (EXIF orientation applied) exceeds max_side (its longer side, or its shorter with
  // max_side_of_short) is decoded, resized by area averaging so that side is max_side (the other
  // side rounded to the nearest pixel, at least 1) and re-encoded: a JPEG as JPEG at jpeg_quality
  // (4:2:0) with its ICC profile, any other as PNG (alpha kept). Images within the bound keep their
  // bytes. 0: no bound.
  uint32_t max_side = 0;
  bool max_side_of_short = false;
  int jpeg_quality = 90;
  // wds and lmdb: store lossless images (PNG, WebP, BMP) as JPEG at jpeg_quality, within the bound
  // or not (with max_side, resized first when above it); alpha is composited on white.
  bool lossless_as_jpeg = false;
  bool keep_size = false;                           // raw: store each image at its own size (no crop)
  RawCompression compress = RawCompression::kNone;  // raw: zstd compresses chunks of images
  uint32_t chunk_samples = 16;                      // raw with zstd: images per compressed chunk
  bool force = false;                               // replace a non-empty OUT
  // Continue a pack that was killed or interrupted in OUT: keep the shards it completed (listed in
  // OUT/pack-journal.json) and pack the rest; the result equals an uninterrupted run. The source and
  // the options must be the same. Without a journal it starts afresh; with a finished dataset from
  // the same source and options it does nothing. LMDB packs always start over.
  bool resume = false;
  // Append only: the options this run was given, by the names the manifest's "options" uses
  // ("samples_per_shard", "crop", "format", ...). Every option not named is taken from the dataset's
  // manifest, so that an append needs none of the flags it was packed with; a named one must equal
  // the dataset's. Unset (the library's and the Writer's default): every option as given.
  std::optional<std::set<std::string>> append_given;
  bool sync = true;  // fsync files before publishing them
  // Distributed packing (docs/distributed.md): this run packs part `partition` of `partitions`
  // (1: the whole input) into OUT, where the other parts may be packing at the same time. The input
  // (sorted, then shuffled) is split into contiguous parts on multiples of samples_per_shard; each
  // part writes the shards of its share with their global numbers, and a part manifest instead of
  // manifest.json; Merge() then writes the dataset's manifest. Not with --force (it would remove
  // the other parts' files); --resume continues this part only.
  uint32_t partition = 0;
  uint32_t partitions = 1;
  // How parts cut and name their shards. By count (the CLI's choice when --samples-per-shard is
  // given): part boundaries on multiples of samples_per_shard, shards numbered as the one-node pack
  // numbers them, which they equal byte for byte. By size: the input split evenly, each part's
  // shards named "<prefix>-p<part>-000000..." and cut as a one-node pack cuts them; the samples
  // (keys, labels, bytes, order) equal the one-node pack's, the shard boundaries differ.
  bool partition_by_count = true;
  // nullptr: Env::Default(). An s3:// OUT is written through an Env that uploads
  // (docs/distributed.md), over this one.
  Env* env = nullptr;
  // An s3:// OUT's credentials and upload settings; convert's input at a URL: its cache folder.
  RemoteOptions remote;
  // Called from one thread at a time, about every 100 ms and once at the end. May be empty.
  std::function<void(const PackProgress&)> on_progress;
  // Called once per skipped input, in input order, from one thread at a time. May be empty.
  std::function<void(const SkippedFile&)> on_skip;
  // When set and true, the pack stops soon (the shard in progress is dropped, complete shards and
  // the journal are kept) and returns Aborted. For Ctrl-C: a signal handler may set it.
  const std::atomic<bool>* cancel = nullptr;
};

struct PackResult {
  Manifest manifest;  // as written to OUT/manifest.json
  uint64_t bytes_read = 0;
  double seconds = 0;
  // Images this run re-encoded (max_side, lossless_as_jpeg), and of those the CMYK JPEGs it turned
  // into RGB (a resumed run counts its own part only).
  uint64_t reencoded = 0;
  uint64_t cmyk_to_rgb = 0;
  // --resume found OUT holding this dataset finished already: nothing was packed (`manifest` is
  // the one there).
  bool already_complete = false;
  // append --resume found nothing interrupted, and the dataset's latest generation made by an append
  // of this very source and options: nothing was done (`manifest` is the one there).
  bool already_appended = false;
};

// Packs src into out. On success out/manifest.json exists and lists every shard. On failure no
// manifest is left in out, so the output never looks complete; the shards completed so far stay,
// with the journal that lets options.resume continue from them (an OUT this run made and left
// empty is removed). Bad inputs are skipped and listed
// (or fail the pack with strict); the Status names the file and the fix.
Status Pack(const std::string& src, const std::string& out, const PackOptions& options, PackResult* result);

// Packs src's images as new shards after those of the dataset in out (local; wds or raw), with the
// options it was packed with (InvalidArgument naming the first that differs): keys continue after
// its samples, its classes keep their labels and src's new classes get the next ones, and the
// manifest, written last and atomically, lists both with a generation one higher. A kill at any
// moment leaves out the dataset before or after (docs/views.md); options.resume continues an
// interrupted append (same src and options). result->manifest: the dataset's new manifest;
// already_complete: options.resume only finished publishing an earlier append.
Status Append(const std::string& src, const std::string& out, const PackOptions& options, PackResult* result);

struct MergeResult {
  Manifest manifest;  // as written to OUT/manifest.json
  uint32_t parts = 0;
};

// Writes OUT/manifest.json from the part manifests of a partitioned pack in OUT, reading nothing
// else. Every part 0..N-1 must be there and finished, with the same options, source and class
// list; otherwise InvalidArgument (or NotFound) naming the part, and nothing is written.
struct MergeOptions {
  Env* env = nullptr;    // nullptr: Env::Default()
  RemoteOptions remote;  // an s3:// OUT's credentials
};
Status Merge(const std::string& out, const MergeOptions& options, MergeResult* result);

}  // namespace shardpack
