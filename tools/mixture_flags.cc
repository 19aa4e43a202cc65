#include "tools/mixture_flags.h"

#include <cstdlib>

namespace shardpack {

Status MixtureFromFlags(const std::vector<std::pair<std::string, std::string>>& flags, Mixture* mixture) {
  for (size_t i = 0; i < flags.size(); ++i) {
    MixtureSource source;
    source.location = flags[i].first;
    const std::string& text = flags[i].second;
    char* end = nullptr;
    source.weight = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      return Status::InvalidArgument("source " + std::to_string(i + 1) + " (" + source.location +
                                     "): the weight must be a number, got '" + text + "'");
    }
    mixture->sources.push_back(source);
  }
  return CheckMixture(*mixture);
}

}  // namespace shardpack
