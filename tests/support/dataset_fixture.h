// Builds small source trees of real images for pack/verify tests.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "shardpack/pack.h"
#include "tests/support/image_factory.h"
#include "tests/support/temp_dir.h"

namespace shardpack::testing {

// The format named `name` ("wds", "lmdb", "raw"), so that test parameters stay readable names.
inline DatasetFormat FormatNamed(const std::string& name) {
  DatasetFormat format = DatasetFormat::kWebDataset;
  if (!ParseDatasetFormat(name, &format).ok()) throw std::invalid_argument("no format named " + name);
  return format;
}

class DatasetTest : public ::testing::Test {
 protected:
  // Writes `per_class` images into each of `classes` folders named c0, c1, ...: JPEGs, with every
  // fifth a PNG. Returns relative paths in scan order.
  std::vector<std::string> MakeTree(int classes, int per_class) {
    std::vector<std::string> paths;
    for (int c = 0; c < classes; ++c) {
      for (int i = 0; i < per_class; ++i) {
        ImageFormat f = i % 5 == 4 ? ImageFormat::kPng : ImageFormat::kJpeg;
        std::string rel =
            "c" + std::to_string(c) + "/img" + std::to_string(i) + (f == ImageFormat::kPng ? ".png" : ".JPG");
        WriteFile(src() + "/" + rel, MakeImage(f, 24 + i, 16 + c, uint64_t(c) * 100 + i));
        paths.push_back(rel);
      }
    }
    return paths;
  }

  PackOptions QuietOptions() {
    PackOptions o;
    o.sync = false;
    o.threads = 2;
    return o;
  }

  Status PackTo(const std::string& out, const PackOptions& o, PackResult* r) { return Pack(src(), out, o, r); }

  std::string src() const { return dir_.Sub("src"); }
  std::string out(const std::string& name = "out") const { return dir_.Sub(name); }

  TempDir dir_;
};

}  // namespace shardpack::testing
