// make_image_tree: writes a directory tree of real images in ImageNet layout, for the demo, the
// benchmarks and CLI tests.
//   make_image_tree OUT --classes 10 --images 200 [--seed 1] [--png-every 10] [--small]
// Every --png-every-th image is a PNG (0: none); the rest are JPEGs of ImageNet-like sizes (about
// 110 KB on average), or small ones (about 64x48) with --small. Output is deterministic.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "tests/support/image_factory.h"

int main(int argc, char** argv) {
  using namespace shardpack;
  using shardpack::testing::MakeImage;
  std::string out;
  int classes = 10, images = 200, png_every = 10;
  uint64_t seed = 1;
  bool small = false;
  CLI::App app{"Writes a tree of real JPEG/PNG images in ImageNet layout (one folder per class)."};
  app.add_option("OUT", out, "Folder to create")->required();
  app.add_option("--classes", classes, "Number of class folders")->capture_default_str();
  app.add_option("--images", images, "Total number of images")->capture_default_str();
  app.add_option("--seed", seed, "Seed for sizes and pixels")->capture_default_str();
  app.add_option("--png-every", png_every, "Every N-th image is a PNG (0: none)")->capture_default_str();
  app.add_flag("--small", small, "Small images (about 64x48) for quick tests");
  CLI11_PARSE(app, argc, argv);

  std::mt19937_64 rng(seed);
  for (int c = 0; c < classes; ++c) {
    char name[32];
    std::snprintf(name, sizeof(name), "n%08d", 1440764 + c * 7919);
    std::filesystem::create_directories(out + "/" + name);
  }
  for (int i = 0; i < images; ++i) {
    const int c = i % classes;
    char cls[32];
    std::snprintf(cls, sizeof(cls), "n%08d", 1440764 + c * 7919);
    // ImageNet's typical sizes: around 500x375, varying.
    int w = small ? 48 + int(rng() % 32) : 360 + int(rng() % 280);
    int h = small ? 36 + int(rng() % 24) : w * 3 / 4 + int(rng() % 40) - 20;
    bool png = png_every > 0 && i % png_every == png_every - 1;
    std::string bytes = MakeImage(png ? ImageFormat::kPng : ImageFormat::kJpeg, w, h, seed * 1000003 + i);
    char file[96];
    std::snprintf(file, sizeof(file), "%s/%s_%d.%s", cls, cls, 10000 + i, png ? "png" : "JPEG");
    std::ofstream(out + "/" + file, std::ios::binary).write(bytes.data(), bytes.size());
  }
  return 0;
}
