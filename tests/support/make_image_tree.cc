// make_image_tree: writes a directory tree of real images in ImageNet layout, for the demo, the
// benchmarks and CLI tests.
//   make_image_tree OUT --classes 10 --images 200 [--seed 1] [--png-every 10] [--small] [--scale 1]
//                       [--turned-every 0]
// Every --png-every-th image is a PNG (0: none); the rest are JPEGs of ImageNet-like sizes (about
// 110 KB on average), or small ones (about 64x48) with --small; --scale multiplies both sides
// (photographs larger than ImageNet's). Every --turned-every-th JPEG is stored as a phone stores a
// portrait photo: its landscape pixels with an EXIF orientation of 6, shown turned a quarter
// clockwise. Output is deterministic.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "tests/support/image_factory.h"

int main(int argc, char** argv) {
  using namespace shardpack;
  std::string out;
  int classes = 10, images = 200, png_every = 10, turned_every = 0;
  uint64_t seed = 1;
  bool small = false;
  int jobs = 1;
  int noise = 24;
  double scale = 1;
  CLI::App app{"Writes a tree of real JPEG/PNG images in ImageNet layout (one folder per class)."};
  app.add_option("OUT", out, "Folder to create")->required();
  app.add_option("--classes", classes, "Number of class folders")->capture_default_str();
  app.add_option("--images", images, "Total number of images")->capture_default_str();
  app.add_option("--seed", seed, "Seed for sizes and pixels")->capture_default_str();
  app.add_option("--png-every", png_every, "Every N-th image is a PNG (0: none)")->capture_default_str();
  app.add_option("--turned-every", turned_every,
                 "Every N-th JPEG is stored sideways with EXIF orientation 6, as phones store portraits (0: none)")
      ->capture_default_str();
  app.add_flag("--small", small, "Small images (about 64x48) for quick tests");
  app.add_option("--noise", noise, "Pixel noise amplitude: more noise, larger JPEGs")->capture_default_str();
  app.add_option("--scale", scale, "Multiplies both sides of every image")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 10.0));
  app.add_option("--jobs", jobs, "Encoder threads (output does not depend on it)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto class_name = [](int c) {
    char name[32];
    std::snprintf(name, sizeof(name), "n%08d", 1440764 + c * 7919);
    return std::string(name);
  };
  for (int c = 0; c < classes; ++c) std::filesystem::create_directories(out + "/" + class_name(c));
  // Sizes come from one sequence, so they do not depend on --jobs; pixels from a per-image seed.
  std::vector<std::pair<int, int>> sizes;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < images; ++i) {
    // ImageNet's typical sizes: around 500x375, varying.
    int w = small ? 48 + int(rng() % 32) : 360 + int(rng() % 280);
    int h = small ? 36 + int(rng() % 24) : w * 3 / 4 + int(rng() % 40) - 20;
    sizes.emplace_back(std::max(1, int(w * scale)), std::max(1, int(h * scale)));
  }
  auto work = [&](int first) {
    for (int i = first; i < images; i += jobs) {
      const std::string cls = class_name(i % classes);
      bool png = png_every > 0 && i % png_every == png_every - 1;
      const auto [w, h] = sizes[i];
      std::string rgb = testing::MakePixels(w, h, seed * 1000003 + i, noise);
      std::string bytes =
          png ? testing::EncodeWithOpenCv(rgb, w, h, ImageFormat::kPng) : testing::EncodeJpeg(rgb, w, h);
      if (!png && turned_every > 0 && i % turned_every == turned_every - 1) {
        bytes = testing::WithExifOrientation(bytes, 6);
      }
      std::string file = out + "/" + cls + "/" + cls + "_" + std::to_string(10000 + i) + (png ? ".png" : ".JPEG");
      std::ofstream(file, std::ios::binary).write(bytes.data(), bytes.size());
    }
  };
  std::vector<std::thread> threads;
  jobs = std::max(1, jobs);
  for (int j = 0; j < jobs; ++j) threads.emplace_back(work, j);
  for (std::thread& t : threads) t.join();
  return 0;
}
