// The samples of a view (docs/views.md) as a pipeline input, for convert: its base's convert input,
// of which the samples the view does not select are passed over. convert VIEW NEW writes the view
// as a dataset of its own.
#pragma once

#include <memory>
#include <string>

#include "formats/common/pack_input.h"
#include "ground/view_manifest.h"
#include "shardpack/pack.h"

namespace shardpack {

// view_dir: the view's folder, whose manifest is `view`. The base it names is opened (a URL is
// cached whole, as convert caches any) and checked to be the dataset the view was made from.
Status OpenViewConvertInput(Env* env, const std::string& view_dir, const ViewManifest& view, const PackOptions& options,
                            std::unique_ptr<PackInput>* input);

}  // namespace shardpack
