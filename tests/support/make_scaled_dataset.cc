// make_scaled_dataset: a dataset of S shards made from a dataset of one (wds or raw) without
// copying a byte: every file of the shard hard-linked S times under the shard's name with its
// number (000000) replaced, and a manifest that lists the S shards (its totals and checksum as pack
// writes them). What the billion-samples benchmark and the 100,000-shard test open.
//   make_scaled_dataset BASE OUT --shards S
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "shardpack/manifest.h"

namespace {

// The name of shard `number`'s copy of `name`: its first "000000" replaced by the number.
std::string Renamed(const std::string& name, uint64_t number) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%06llu", static_cast<unsigned long long>(number));
  std::string renamed = name;
  const size_t at = renamed.find("000000");
  if (at != std::string::npos) renamed.replace(at, 6, digits);
  return renamed;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace shardpack;
  std::string base, out;
  uint64_t shards = 0;
  CLI::App app{"Makes a dataset of S shards from a dataset of one, with hard links."};
  app.add_option("BASE", base, "A packed dataset (wds or raw) of exactly one shard")->required();
  app.add_option("OUT", out, "Folder to create")->required();
  app.add_option("--shards", shards, "Shards of the new dataset")->required();
  CLI11_PARSE(app, argc, argv);
  Manifest manifest;
  Status s = ReadManifest(Env::Default(), base, &manifest);
  if (!s.ok() || manifest.shards.size() != 1) {
    std::fprintf(stderr, "make_scaled_dataset: %s: %s\n", base.c_str(),
                 s.ok() ? "needs a dataset of exactly one shard" : s.ToString().c_str());
    return 1;
  }
  namespace fs = std::filesystem;
  const ShardEntry one = manifest.shards[0];
  try {
    fs::create_directories(out);
    manifest.shards.clear();
    manifest.shards.reserve(shards);
    manifest.skipped.clear();
    // Each file's source of links: the base's file until it has as many links as the file system
    // allows (ext4: 65,000), then a copy of it, which takes the next links.
    std::map<std::string, fs::path> source;
    for (uint64_t i = 0; i < shards; ++i) {
      ShardEntry shard = one;
      const auto link = [&](std::string* name) {
        if (name->empty()) return;
        const std::string renamed = Renamed(*name, i);
        const fs::path target = fs::path(out) / renamed;
        fs::path& from = source.try_emplace(*name, fs::path(base) / *name).first->second;
        std::error_code error;
        fs::create_hard_link(from, target, error);
        if (error == std::errc::too_many_links) {
          fs::copy_file(from, target);
          from = target;
        } else if (error) {
          throw fs::filesystem_error("cannot link", from, target, error);
        }
        *name = renamed;
      };
      link(&shard.file);
      link(&shard.index.file);
      link(&shard.sample_table.file);
      for (SideFile& f : shard.side_files) link(&f.file);
      manifest.shards.push_back(std::move(shard));
    }
  } catch (const fs::filesystem_error& e) {
    std::fprintf(stderr, "make_scaled_dataset: %s\n", e.what());
    return 1;
  }
  manifest.samples = one.samples * shards;
  manifest.bytes = one.bytes * shards;
  manifest.name = fs::path(out).filename().string();
  s = WriteManifest(Env::Default(), out, manifest);
  if (!s.ok()) {
    std::fprintf(stderr, "make_scaled_dataset: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
