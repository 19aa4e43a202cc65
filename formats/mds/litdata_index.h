// LitData's optimized datasets (litdata 0.2.x, `litdata.optimize`): the folder's index.json, parsed
// into the MDS reader's terms. A LitData chunk has MDS's layout (a u32 count, count + 1 offsets
// from the file's start, the items; an item a u32 size for every leaf, then the leaves), so the
// MDS code reads it once its leaves are named as columns (docs/formats/litdata.md).
//
// index.json is {"chunks": [{"filename", "chunk_size" (items), "chunk_bytes" (the file's size)}],
// "config": {"data_format": [one serializer a leaf], "data_spec": a pytree spec as JSON, "compression",
// "compression_level", "item_loader", "encryption", ...}}. Read: PyTreeLoader items whose spec is
// a flat dict (leaves named by its keys), a tuple or list (named 0, 1, ...), or one leaf ("item");
// uncompressed, or zstd at the "chunk" (the whole file) or "batch" (litdata_framed.h) level.
#pragma once

#include <string>
#include <string_view>

#include "formats/mds/mds_index.h"
#include "shardpack/status.h"

namespace shardpack {

// Whether `text` is a LitData index: a JSON object with "chunks" and "config".
bool LooksLikeLitDataIndex(std::string_view text);

// Parses it into *index: a shard per chunk, a column per leaf (every size variable: LitData writes
// each leaf's size). Leaves keep their serializer's name as their encoding, but for those the MDS
// code reads by other names ("float" is "float64", "text" is "str", "image:png" is "png", any other
// "image:..." is "jpeg"). Unsupported naming the fix for what is not read (another item loader,
// encryption, nested items, other compressions); DataLoss naming the chunk and field otherwise.
Status ParseLitDataIndex(std::string_view text, const std::string& path, MdsIndex* index);

}  // namespace shardpack
