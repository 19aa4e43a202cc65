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

Status FindFormat(std::string_view name, const Format** format) {
  for (const Format* f : AllFormats()) {
    if (f->name() == name) {
      *format = f;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown format '" + std::string(name) + "'; use " + FormatNames());
}

Status FindFormatOf(const std::string& dir, const Manifest& manifest, const Format** format) {
  if (FindFormat(manifest.format, format).ok()) return Status::OK();
  return Status::Unsupported(dir + ": format '" + manifest.format + "' cannot be read by this version (it reads " +
                             FormatNames(" and ") + ")");
}

const Format& ShardListFormat() {
  for (const Format* f : AllFormats()) {
    if (f->reads_shard_lists()) return *f;
  }
  return *AllFormats().front();  // unreachable while the table holds a format that reads them
}

std::string FormatNames(std::string_view last_separator) {
  std::string names;
  const std::vector<const Format*>& all = AllFormats();
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0) names += i + 1 == all.size() ? std::string(last_separator) : std::string(", ");
    names += all[i]->name();
  }
  return names;
}

}  // namespace shardpack
