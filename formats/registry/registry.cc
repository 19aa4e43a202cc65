#include "formats/registry/registry.h"

#include "formats/lmdb/lmdb.h"
#include "formats/raw/raw.h"
#include "formats/wds/wds.h"

namespace shardpack {

const std::vector<const Format*>& AllFormats() {
  // The table. A plain list, built on first use: no static self-registration to go missing
  // when a linker drops an object file nobody refers to.
  static const std::vector<const Format*> formats = {&WdsFormat(), &LmdbFormat(), &RawFormat()};
  return formats;
}

Status FindFormat(DatasetFormat id, const Format** format) {
  for (const Format* f : AllFormats()) {
    if (f->id() == id) {
      *format = f;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("format number " + std::to_string(int(id)) + " has no implementation; use " +
                                 DatasetFormatNames());
}

Status FindFormatOf(const std::string& dir, const Manifest& manifest, const Format** format) {
  if (FindFormat(manifest.format, format).ok()) return Status::OK();
  return Status::Unsupported(dir + ": format '" + std::string(DatasetFormatName(manifest.format)) +
                             "' cannot be read by this version (it reads " + DatasetFormatNames(" and ") + ")");
}

const Format& ShardListFormat() {
  for (const Format* f : AllFormats()) {
    if (f->reads_shard_lists()) return *f;
  }
  return *AllFormats().front();  // unreachable while the table holds a format that reads them
}

}  // namespace shardpack
