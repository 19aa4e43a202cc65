#include "tools/progress_printer.h"

#include <unistd.h>

#include <cstdio>

namespace shardpack {

ProgressPrinter::ProgressPrinter(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO)) {}

void ProgressPrinter::Update(const PackProgress& p) {
  if (!enabled_) return;
  const double mbps = p.elapsed_seconds > 0 ? p.bytes_read / 1e6 / p.elapsed_seconds : 0;
  const double rate = p.elapsed_seconds > 0 ? p.files_done / p.elapsed_seconds : 0;
  const double eta = rate > 0 ? (p.files_total - p.files_done) / rate : 0;
  std::fprintf(stderr, "\r\033[K%llu/%llu files  %.1f MB/s  %llu skipped  ETA %d:%02d",
               static_cast<unsigned long long>(p.files_done), static_cast<unsigned long long>(p.files_total), mbps,
               static_cast<unsigned long long>(p.files_skipped), static_cast<int>(eta) / 60,
               static_cast<int>(eta) % 60);
  std::fflush(stderr);
  printed_ = true;
}

void ProgressPrinter::UpdateShards(const char* what, uint64_t done, uint64_t total) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 2 || (printed_ && now - last_ < std::chrono::milliseconds(100))) return;
  last_ = now;
  const double eta = done > 0 ? elapsed / double(done) * double(total - done) : 0;
  std::fprintf(stderr, "\r\033[K%s: %llu/%llu shards  ETA %d:%02d", what, static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total), static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
  std::fflush(stderr);
  printed_ = true;
}

void ProgressPrinter::Finish() {
  if (printed_) std::fprintf(stderr, "\r\033[K");
  printed_ = false;
}

}  // namespace shardpack
