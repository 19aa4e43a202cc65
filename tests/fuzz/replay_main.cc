// Replays fuzz inputs without libFuzzer: each argument is a file, or a folder whose files are read,
// and each file goes once through the target's LLVMFuzzerTestOneInput. Linked with every fuzz
// target in the sanitizer build (SHARDPACK_SANITIZE), where ctest replays each target's corpus,
// seeds and the inputs of past findings, under ASan and UBSan with GCC: CI's regression check.
// Fuzzing proper (new inputs, coverage-guided) is scripts/fuzz.sh's job, with clang's libFuzzer.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  // Exactly the file's bytes on the heap, as libFuzzer hands them: ASan sees a read past the end.
  const std::vector<uint8_t> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(input.empty() ? nullptr : input.data(), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else {
      files.push_back(path);
    }
    for (const auto& file : files) {
      Replay(file);
      ++replayed;
    }
  }
  std::printf("replayed %zu inputs\n", replayed);
  return replayed > 0 ? 0 : 1;  // an empty corpus is a mistake, not a pass
}
