// A one-line progress display for a terminal: files, MB/s, ETA. Prints nothing when stderr is not
// a terminal or when disabled.
#pragma once

#include "shardpack/pack.h"

namespace shardpack {

class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool enabled);
  void Update(const PackProgress& p);
  // Clears the line, so that later output starts on a clean line.
  void Finish();

 private:
  bool enabled_;
  bool printed_ = false;
};

}  // namespace shardpack
