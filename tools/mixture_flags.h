// `--source LOCATION WEIGHT`, repeated: the sources of a mixture, as bench and report take them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "shardpack/mixture.h"

namespace shardpack {

// `--source LOCATION WEIGHT`, repeated: the mixture's sources. A weight that is not a number (as
// text) is refused here, naming the source; CheckMixture refuses zero, negative and NaN.
Status MixtureFromFlags(const std::vector<std::pair<std::string, std::string>>& flags, Mixture* mixture);

}  // namespace shardpack
