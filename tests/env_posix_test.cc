// The POSIX Env's writable file: appends gathered into chunks that a background thread writes
// (ground/env_posix.cc), or, unbuffered, written as they come. What arrives on disk must be exactly what was appended,
// in order, whatever the sizes of the appends and wherever WriteAt and Sync fall; and an error of a background write
// must reach the caller.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "shardpack/env.h"
#include "tests/support/temp_dir.h"

namespace shardpack {
namespace {

using testing::ReadFile;
using testing::TempDir;

// n bytes that differ from their neighbours and from a shifted copy: position i holds a byte of
// (i + salt) * a large odd number, so a piece written twice, lost or out of order shows.
std::string Pattern(size_t n, uint64_t salt) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(((i + salt) * 0x9E3779B97F4A7C15ull) >> 56);
  return s;
}

void AppendsOfEverySizeArriveInOrder(bool unbuffered) {
  TempDir dir;
  const std::string path = dir.Sub("f");
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE((unbuffered ? Env::Default()->NewUnbufferedWritableFile(path, &file)
                          : Env::Default()->NewWritableFile(path, &file))
                  .ok());
  std::string expected;
  auto append = [&](size_t n) {
    const std::string piece = Pattern(n, expected.size());
    ASSERT_TRUE(file->Append(piece).ok()) << n;
    expected += piece;
  };
  // Around the write sizes (8 and 32 KiB) and the 4 MiB chunk: under, at and over each, and pieces
  // larger than a chunk (split across chunks).
  for (size_t n :
       {size_t(1), size_t(511), size_t(8191), size_t(8192), size_t(8193), size_t(32767), size_t(32768), size_t(32769),
        size_t(4 << 20), size_t((4 << 20) - 1), size_t((4 << 20) + 3), size_t(10 << 20), size_t(0), size_t(7)}) {
    append(n);
  }
  for (int i = 0; i < 100; ++i) append(100000 + size_t(i) * 37);  // like images
  // Overwrite bytes that lie in a chunk written in the background, and in the one being filled.
  const std::string patch = "overwritten";
  ASSERT_TRUE(file->WriteAt(100, patch).ok());
  expected.replace(100, patch.size(), patch);
  append(3 << 20);
  ASSERT_TRUE(file->WriteAt(expected.size() - 5, "tail!").ok());
  expected.replace(expected.size() - 5, 5, "tail!");
  // Sync writes everything appended so far.
  ASSERT_TRUE(file->Sync().ok());
  uint64_t size = 0;
  ASSERT_TRUE(Env::Default()->GetFileSize(path, &size).ok());
  EXPECT_EQ(size, expected.size());
  append(5 << 20);
  append(12345);
  ASSERT_TRUE(file->Sync().ok());
  // A chunk goes to the background and Close follows at once, while it is still being written:
  // Close must wait for it before writing the byte after it.
  const std::string last = Pattern((4 << 20) + 1, expected.size());
  expected += last;
  ASSERT_TRUE(file->Append(last).ok());
  ASSERT_TRUE(file->Close().ok());
  const std::string written = ReadFile(path);
  ASSERT_EQ(written.size(), expected.size());
  EXPECT_TRUE(written == expected) << "first difference at byte "
                                   << std::mismatch(written.begin(), written.end(), expected.begin()).first -
                                          written.begin();
}

// While it lives, files may not grow past `bytes` in this process (RLIMIT_FSIZE), and a write past
// it fails with EFBIG instead of killing the process with SIGXFSZ.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ok_ = getrlimit(RLIMIT_FSIZE, &old_) == 0;
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{bytes, old_.rlim_max};
    ok_ = ok_ && setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit old_{};
  void (*old_handler_)(int) = nullptr;
  bool ok_ = false;
};

TEST(PosixWritableFile, AppendsOfEverySizeArriveInOrder) { AppendsOfEverySizeArriveInOrder(false); }
TEST(PosixWritableFile, UnbufferedAppendsOfEverySizeArriveInOrder) { AppendsOfEverySizeArriveInOrder(true); }

// Unbuffered, the append that crosses the 6 MiB limit fails itself, and so does every call after.
TEST(PosixWritableFile, AnUnbufferedWriteErrorIsReportedByItsAppendAndSticks) {
  TempDir dir;
  const std::string path = dir.Sub("f");
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(Env::Default()->NewUnbufferedWritableFile(path, &file).ok());
  const std::string chunk = Pattern(4 << 20, 0);
  Status first, second, sync, close;
  {
    FileSizeLimit limit(6 << 20);
    ASSERT_TRUE(limit.ok());
    first = file->Append(chunk);
    second = file->Append(chunk);
    sync = file->Sync();
    close = file->Close();
  }
  EXPECT_TRUE(first.ok()) << first.ToString();
  const std::string message = "cannot write " + path + ": File too large";
  EXPECT_EQ(second.message(), message);
  EXPECT_EQ(sync.message(), message);
  EXPECT_EQ(close.message(), message);
  EXPECT_EQ(ReadFile(path).size(), size_t(6 << 20));  // the part that fit, nothing else
}

// Files may not grow past 6 MiB in this process (RLIMIT_FSIZE): the second chunk's write fails in
// the background. The caller learns it from the next call that waits for that write, and every
// call after it fails the same way; nothing is silently dropped.
TEST(PosixWritableFile, ABackgroundWriteErrorIsReportedByTheNextCallAndSticks) {
  TempDir dir;
  const std::string path = dir.Sub("f");
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(Env::Default()->NewWritableFile(path, &file).ok());
  const std::string chunk = Pattern(4 << 20, 0);
  Status first, second, sync, later, close;
  {
    FileSizeLimit limit(6 << 20);
    ASSERT_TRUE(limit.ok());
    first = file->Append(chunk);   // chunk 1 goes to the background: fits
    second = file->Append(chunk);  // waits for chunk 1; chunk 2 goes: fails at 6 MiB
    sync = file->Sync();           // waits for chunk 2
    later = file->Append("x");
    close = file->Close();
  }
  EXPECT_TRUE(first.ok()) << first.ToString();
  EXPECT_TRUE(second.ok()) << second.ToString();
  const std::string message = "cannot write " + path + ": File too large";
  EXPECT_EQ(sync.message(), message);
  EXPECT_EQ(later.message(), message);
  EXPECT_EQ(close.message(), message);
  // What was written before the limit is intact.
  const std::string written = ReadFile(path);
  ASSERT_EQ(written.size(), size_t(6 << 20));
  EXPECT_TRUE(written.substr(0, 4 << 20) == chunk);
}

}  // namespace
}  // namespace shardpack

namespace shardpack {
namespace {

// Random-access files past a fifth of the open-file limit are opened for each read (ground/env_posix.cc,
// OpenFileLimiter): they read the same bytes, hold no descriptor meanwhile, and a path that names
// another file by then is an error, never the other file's bytes. Files within the share keep
// their descriptor, so a replaced one still reads the file it opened.
TEST(PosixRandomAccessFile, FilesPastTheShareOfTheLimitReopenForEachReadAndNoticeAReplacement) {
  TempDir dir;
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  struct rlimit low = old;
  low.rlim_cur = 100;  // a share of 20: this process holds fewer random-access files than that now
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<std::unique_ptr<RandomAccessFile>> files(40);
  for (size_t i = 0; i < files.size(); ++i) {
    testing::WriteFile(dir.Sub(std::to_string(i)), Pattern(1000, i));
    ASSERT_TRUE(Env::Default()->NewRandomAccessFile(dir.Sub(std::to_string(i)), &files[i]).ok()) << i;
  }
  size_t open_now = 0;
  for (int fd = 0; fd < 100; ++fd) open_now += fcntl(fd, F_GETFD) != -1;
  setrlimit(RLIMIT_NOFILE, &old);
  EXPECT_LT(open_now, 20 + 10u) << "at most the share kept open, besides the test's own few";
  for (size_t i = 0; i < files.size(); ++i) {
    std::string got(10, '\0');
    ASSERT_TRUE(files[i]->Read(500, 10, got.data()).ok()) << i;
    EXPECT_EQ(got, Pattern(1000, i).substr(500, 10)) << i;
  }
  // Replaced (a new file renamed over each path): the first file kept its descriptor, the last did not.
  for (size_t i : {size_t(0), files.size() - 1}) {
    testing::WriteFile(dir.Sub("new"), Pattern(1000, 99));
    ASSERT_EQ(std::rename(dir.Sub("new").c_str(), dir.Sub(std::to_string(i)).c_str()), 0);
  }
  std::string got(10, '\0');
  EXPECT_TRUE(files.front()->Read(0, 10, got.data()).ok());
  EXPECT_EQ(got, Pattern(1000, 0).substr(0, 10));
  const Status s = files.back()->Read(0, 10, got.data());
  EXPECT_EQ(s.code(), Status::Code::kDataLoss);
  EXPECT_EQ(s.message(), dir.Sub("39") + " was replaced by another file while it was being read");
  FileStat st;
  EXPECT_EQ(files.back()->Stat(&st).message(), s.message());
}

// Opened by a relative path, then read after the process changed its working directory (a training
// script's os.chdir): a file without a kept descriptor is opened again by where it was, not by the
// path as written.
TEST(PosixRandomAccessFile, AFileReopenedForEachReadIgnoresALaterChangeOfDirectory) {
  TempDir dir;
  char before[PATH_MAX];
  ASSERT_NE(getcwd(before, sizeof(before)), nullptr);
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  struct rlimit low = old;
  low.rlim_cur = 100;  // a share of 20
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  ASSERT_EQ(chdir(dir.path().c_str()), 0);
  std::vector<std::unique_ptr<RandomAccessFile>> files(40);
  for (size_t i = 0; i < files.size(); ++i) {
    testing::WriteFile(dir.Sub(std::to_string(i)), Pattern(100, i));
    ASSERT_TRUE(Env::Default()->NewRandomAccessFile(std::to_string(i), &files[i]).ok()) << i;
  }
  ASSERT_EQ(chdir("/"), 0);
  setrlimit(RLIMIT_NOFILE, &old);
  for (size_t i = 0; i < files.size(); ++i) {
    std::string got(10, '\0');
    const Status s = files[i]->Read(50, 10, got.data());
    EXPECT_TRUE(s.ok()) << i << ": " << s.ToString();
    EXPECT_EQ(got, Pattern(100, i).substr(50, 10)) << i;
  }
  files.clear();
  ASSERT_EQ(chdir(before), 0);
}

// A FIFO planted in a shared folder under a name the loader opens (a team's sample groups or their
// lock) hung it: open(2) of a FIFO waits for the other end. Every open of the Env is refused at
// once, naming the file. Each call runs on its own thread; should one block (as on the code
// before), the test opens the FIFO's other end to free it, and fails.
TEST(PosixEnv, AFifoWhereAFileShouldBeIsRefusedAtOnceByEveryOpen) {
  TempDir dir;
  const std::string fifo = dir.Sub("key-0.groups");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Env* env = Env::Default();
  const std::vector<std::pair<std::string, std::function<Status()>>> opens = {
      {"MapFile",
       [&] {
         std::unique_ptr<MappedFile> f;
         return env->MapFile(fifo, &f);
       }},
      {"LockFile",
       [&] {
         std::unique_ptr<FileLock> l;
         return env->LockFile(fifo, &l);
       }},
      {"TryLockFile",
       [&] {
         std::unique_ptr<FileLock> l;
         bool got;
         return env->TryLockFile(fifo, true, &l, &got);
       }},
      {"ReadFile",
       [&] {
         std::string text;
         return env->ReadFile(fifo, 1 << 20, &text);
       }},
      {"NewSequentialFile",
       [&] {
         std::unique_ptr<SequentialFile> f;
         return env->NewSequentialFile(fifo, &f);
       }},
      {"NewRandomAccessFile",
       [&] {
         std::unique_ptr<RandomAccessFile> f;
         return env->NewRandomAccessFile(fifo, &f);
       }},
      {"NewWritableFile",
       [&] {
         std::unique_ptr<WritableFile> f;
         return env->NewWritableFile(fifo, &f);
       }},
      {"NewAppendableFile",
       [&] {
         std::unique_ptr<WritableFile> f;
         return env->NewAppendableFile(fifo, &f);
       }},
      {"DropCachedPages", [&] { return env->DropCachedPages(fifo); }},
  };
  for (const auto& [name, open] : opens) {
    std::future<Status> done = std::async(std::launch::async, open);
    if (done.wait_for(std::chrono::seconds(5)) == std::future_status::timeout) {
      ADD_FAILURE() << name << " blocked on a FIFO";
      const int other_end = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);  // frees either kind of open
      done.wait();
      ::close(other_end);
      continue;
    }
    EXPECT_EQ(done.get().ToString(), "invalid argument: " + fifo +
                                         " is a FIFO, not a regular file: shardpack opens "
                                         "regular files only")
        << name;
  }
}

}  // namespace
}  // namespace shardpack
