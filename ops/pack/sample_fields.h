// The checks a sample's fields pass before they are packed (docs/formats/source-layout.md):
// what a training job will parse must parse, so that a bad file is reported at pack time, named,
// instead of failing an epoch hours later.
#pragma once

#include "formats/common/pack_input.h"
#include "shardpack/status.h"

namespace shardpack {

// By the field name's last part: text ("txt", "caption.txt") must be valid UTF-8; JSON ("json",
// "ann.json") must parse; an image ("seg.png", a mask) must have the width and height of the
// sample's image (item.info, probed before) as it is shown, after a JPEG's EXIF orientation.
// Corrupt naming the field otherwise; other fields are kept as they are.
Status CheckSampleFields(const PackItem& item);

}  // namespace shardpack
