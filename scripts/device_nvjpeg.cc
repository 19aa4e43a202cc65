// The figure a GPU decode path would have to beat: nvJPEG's batched decode of the JPEGs under a
// folder into GPU memory (interleaved RGB, full size), images/s, with one back-end:
//   hardware     the GPU's JPEG engines (NVJPEG_BACKEND_HARDWARE; baseline JPEGs only)
//   gpu-hybrid   Huffman decode on the GPU too (NVJPEG_BACKEND_GPU_HYBRID), the CUDA back-end
// The files are read into host memory first, so only the decode is timed: batches of BATCH images
// in the folder's order, round after round, for SECONDS, then one stream synchronize. For
// scripts/device-bench.sh, which builds it there with the device's nvcc (this machine's CUDA has
// no nvJPEG). Only a measurement: shardpack has no GPU decode path.
//   nvcc -O2 -o nvjpeg_bench scripts/device_nvjpeg.cc -lnvjpeg
//   nvjpeg_bench FOLDER BACKEND BATCH SECONDS [MAX_FILES]
#include <cuda_runtime_api.h>
#include <nvjpeg.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

void Check(nvjpegStatus_t status, const char* what) {
  if (status != NVJPEG_STATUS_SUCCESS) {
    std::fprintf(stderr, "nvjpeg_bench: %s failed with nvjpegStatus %d\n", what, static_cast<int>(status));
    std::exit(1);
  }
}

void Check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "nvjpeg_bench: %s failed: %s\n", what, cudaGetErrorString(error));
    std::exit(1);
  }
}

std::vector<std::vector<unsigned char>> ReadJpegs(const std::string& folder, size_t max_files) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".JPEG" || ext == ".jpg" || ext == ".jpeg")) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  if (paths.size() > max_files) paths.resize(max_files);
  std::vector<std::vector<unsigned char>> files;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    files.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: nvjpeg_bench FOLDER hardware|gpu-hybrid BATCH SECONDS [MAX_FILES]\n");
    return 2;
  }
  const std::string folder = argv[1], backend_name = argv[2];
  const int batch = std::atoi(argv[3]);
  const double seconds = std::atof(argv[4]);
  const size_t max_files = argc > 5 ? std::strtoul(argv[5], nullptr, 10) : 4096;
  const nvjpegBackend_t backend = backend_name == "hardware" ? NVJPEG_BACKEND_HARDWARE : NVJPEG_BACKEND_GPU_HYBRID;

  nvjpegHandle_t handle = nullptr;
  const nvjpegStatus_t created = nvjpegCreateEx(backend, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &handle);
  if (created != NVJPEG_STATUS_SUCCESS) {
    std::printf("nvjpeg %s: not available (nvjpegCreateEx returned %d)\n", backend_name.c_str(),
                static_cast<int>(created));
    return 0;
  }
  if (backend == NVJPEG_BACKEND_HARDWARE) {
    unsigned engines = 0, cores = 0;
    Check(nvjpegGetHardwareDecoderInfo(handle, &engines, &cores), "nvjpegGetHardwareDecoderInfo");
    std::printf("nvjpeg hardware decoder: %u engines, %u cores per engine\n", engines, cores);
  }
  nvjpegJpegState_t state = nullptr;
  Check(nvjpegJpegStateCreate(handle, &state), "nvjpegJpegStateCreate");
  Check(nvjpegDecodeBatchedInitialize(handle, state, batch, 1, NVJPEG_OUTPUT_RGBI), "nvjpegDecodeBatchedInitialize");

  const auto files = ReadJpegs(folder, max_files);
  if (files.size() < static_cast<size_t>(batch)) {
    std::fprintf(stderr, "nvjpeg_bench: %zu JPEGs under %s, fewer than one batch\n", files.size(), folder.c_str());
    return 1;
  }
  // One output buffer per image of a batch, as large as the largest image.
  int most_pixels = 0;
  for (const auto& file : files) {
    int components = 0, widths[NVJPEG_MAX_COMPONENT] = {}, heights[NVJPEG_MAX_COMPONENT] = {};
    nvjpegChromaSubsampling_t subsampling;
    Check(nvjpegGetImageInfo(handle, file.data(), file.size(), &components, &subsampling, widths, heights),
          "nvjpegGetImageInfo");
    most_pixels = std::max(most_pixels, widths[0] * heights[0]);
  }
  std::vector<unsigned char*> buffers(batch);
  for (auto& buffer : buffers)
    Check(cudaMalloc(reinterpret_cast<void**>(&buffer), size_t(most_pixels) * 3), "cudaMalloc");
  cudaStream_t stream;
  Check(cudaStreamCreate(&stream), "cudaStreamCreate");

  const size_t rounds_per_pass = files.size() / batch;
  std::vector<const unsigned char*> data(batch);
  std::vector<size_t> lengths(batch);
  std::vector<nvjpegImage_t> outputs(batch);
  auto decode_batch = [&](size_t index) {
    for (int i = 0; i < batch; ++i) {
      const auto& file = files[(index % rounds_per_pass) * batch + i];
      int components = 0, widths[NVJPEG_MAX_COMPONENT] = {}, heights[NVJPEG_MAX_COMPONENT] = {};
      nvjpegChromaSubsampling_t subsampling;
      Check(nvjpegGetImageInfo(handle, file.data(), file.size(), &components, &subsampling, widths, heights),
            "nvjpegGetImageInfo");
      data[i] = file.data();
      lengths[i] = file.size();
      outputs[i] = nvjpegImage_t{};
      outputs[i].channel[0] = buffers[i];
      outputs[i].pitch[0] = size_t(widths[0]) * 3;
    }
    Check(nvjpegDecodeBatched(handle, state, data.data(), lengths.data(), outputs.data(), stream),
          "nvjpegDecodeBatched");
  };
  for (int i = 0; i < 3; ++i) decode_batch(i);  // warm-up: allocations inside nvJPEG
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const auto start = std::chrono::steady_clock::now();
  size_t decoded = 0, index = 0;
  double elapsed = 0;
  while (elapsed < seconds) {
    decode_batch(index++);
    decoded += batch;
    if (index % 8 == 0) {
      Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("nvjpeg %s batched decode, batch %d, %zu distinct files: %zu images in %.1f s, images/s %.1f\n",
              backend_name.c_str(), batch, files.size(), decoded, elapsed, decoded / elapsed);
  for (auto* buffer : buffers) cudaFree(buffer);
  nvjpegJpegStateDestroy(state);
  nvjpegDestroy(handle);
  return 0;
}
