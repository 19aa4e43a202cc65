// Crash safety: pack killed (SIGKILL) at every kind of point and resumed with `shardpack pack
// --resume` ends byte-identical to an uninterrupted run, and a killed run never leaves output that
// looks complete. Also Ctrl-C, and what --resume refuses.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "ground/units.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/run_command.h"

namespace shardpack {
namespace {

namespace fs = std::filesystem;
using testing::Difference;
using testing::Files;
using testing::RunCommand;
using testing::Sanitized;

// The bytes of the shards (.tar) in a folder.
uint64_t TotalShardBytes(const std::string& dir) {
  uint64_t bytes = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".tar") bytes += fs::file_size(e.path());
  }
  return bytes;
}

class ResumeTest : public testing::DatasetTest, public ::testing::WithParamInterface<std::string> {
 public:
 protected:
  void SetUp() override {
    MakeTree(3, 7);                                               // 21 images
    testing::WriteFile(src() + "/c1/notes.txt", "not an image");  // a skip before the first shard ends
    std::string truncated = testing::MakeImage(ImageFormat::kJpeg, 30, 20, 99);
    testing::WriteFile(src() + "/c2/broken.jpg", truncated.substr(0, truncated.size() / 2));  // a skip later
  }

  // Output folders all named "out" (the manifest records the folder's name), in separate parents.
  std::string Out(const std::string& parent) const { return dir_.Sub(parent) + "/out"; }

  std::vector<std::string> PackCommand(const std::string& out) const {
    std::vector<std::string> cmd = {SHARDPACK_CLI,         "pack", src(),       out,      "--format", GetParam(),
                                    "--samples-per-shard", "4",    "--no-sync", "--quiet"};
    if (GetParam() == "raw") cmd.insert(cmd.end(), {"--crop", "16"});
    return cmd;
  }

  std::vector<std::string> DriverCommand(const std::string& out, uint64_t kill_at) const {
    return {KILL_DRIVER, src(), out, GetParam(), "4", std::to_string(kill_at)};
  }
};

TEST_P(ResumeTest, KilledAnywhereThenResumedEqualsAnUninterruptedRun) {
  std::string output;
  ASSERT_EQ(RunCommand(PackCommand(Out("reference")), &output), 0) << output;
  const auto reference = Files(Out("reference"));
  ASSERT_EQ(reference.count("pack-journal.json"), 0u);
  ASSERT_EQ(RunCommand(DriverCommand(Out("count"), 0), &output), 0) << output;
  ASSERT_EQ(Difference(Files(Out("count")), reference), "");  // the driver packs what the command line does
  const uint64_t operations = std::stoull(output.substr(output.find("operations ") + 11));
  ASSERT_GT(operations, GetParam() == "lmdb" ? 4u : 20u);
  // About 40 kill points spread over the run (10 under the sanitizers, whose runs are slower: see
  // Sanitized()), and every one of the last 12 operations (the last shard, the manifest, the
  // journal's removal).
  const uint64_t spread = Sanitized() ? 10 : 40;
  std::vector<uint64_t> points;
  for (uint64_t k = 1; k + 12 <= operations; k += std::max<uint64_t>(1, operations / spread)) points.push_back(k);
  for (uint64_t k = operations - 11; k <= operations; ++k) points.push_back(k);
  int killed = 0;
  for (uint64_t k : points) {
    SCOPED_TRACE("killed at operation " + std::to_string(k) + " of " + std::to_string(operations));
    const std::string out_k = Out("k" + std::to_string(k));
    const int status = RunCommand(DriverCommand(out_k, k), &output);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << output;
    ++killed;
    // Looks complete only if it is: a manifest exists only once everything it lists is in place.
    if (fs::exists(out_k + "/manifest.json")) {
      auto files = Files(out_k);
      files.erase("pack-journal.json");
      EXPECT_EQ(Difference(files, reference), "");
    }
    std::vector<std::string> resume = PackCommand(out_k);
    resume.push_back("--resume");
    ASSERT_EQ(RunCommand(resume, &output), 0) << output;
    EXPECT_EQ(Difference(Files(out_k), reference), "");
    fs::remove_all(dir_.Sub("k" + std::to_string(k)));
  }
  EXPECT_EQ(killed, int(points.size()));
}

// Kills at moments rather than operations, which also land inside LMDB's writes to its map.
TEST_P(ResumeTest, KilledByATimerThenResumedEqualsAnUninterruptedRun) {
  std::string output;
  ASSERT_EQ(RunCommand(PackCommand(Out("reference")), &output), 0) << output;
  const auto reference = Files(Out("reference"));
  int killed = 0;  // runs the timer stopped: without them the test would prove nothing
  for (const char* delay : {"0.002", "0.005", "0.01", "0.02", "0.03", "0.05", "0.08"}) {
    SCOPED_TRACE(std::string("killed after ") + delay + " s");
    const std::string parent = std::string("t") + delay, out_t = Out(parent);
    std::vector<std::string> kill = {"timeout", "-s", "KILL", delay};
    for (const std::string& a : DriverCommand(out_t, 0)) kill.push_back(a);
    // Killed, or finished first: either way --resume must complete it. timeout sends SIGKILL to its
    // process group, so it dies of it too (or exits 128 + 9 where it survives).
    const int status = RunCommand(kill, &output);
    if ((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) || (WIFEXITED(status) && WEXITSTATUS(status) == 128 + 9)) {
      ++killed;
    }
    if (fs::exists(out_t + "/manifest.json")) {
      auto files = Files(out_t);
      files.erase("pack-journal.json");
      EXPECT_EQ(Difference(files, reference), "");
    }
    std::vector<std::string> resume = PackCommand(out_t);
    resume.push_back("--resume");
    ASSERT_EQ(RunCommand(resume, &output), 0) << output;
    EXPECT_EQ(Difference(Files(out_t), reference), "");
    fs::remove_all(dir_.Sub(parent));
  }
  // The pack of this tree takes far longer than 5 ms, so at least the two shortest timers kill it.
  EXPECT_GE(killed, 2);
}

// Sharded formats only: the test waits for the journal of the first shard (LMDB has none).
class CtrlCTest : public ResumeTest {};

TEST_P(CtrlCTest, CtrlCOrSigtermStopsCleanlyAndSaysHowToResume) {
  // A bigger tree, decoded in full, so that the pack is still running when the signal comes (the
  // sanitizers' slower decode needs fewer images for that).
  const int big = Sanitized() ? 150 : 400;
  for (int i = 0; i < big; ++i) {
    testing::WriteFile(src() + "/c3/big" + std::to_string(i) + ".jpg",
                       testing::MakeImage(ImageFormat::kJpeg, 200, 150, uint64_t(i)));
  }
  std::string output;
  std::vector<std::string> cmd = PackCommand(Out("reference"));
  cmd.insert(cmd.end(), {"--check", "decode"});
  ASSERT_EQ(RunCommand(cmd, &output), 0) << output;
  // Ctrl-C (SIGINT) and a scheduler's stop (SIGTERM, as Slurm and Kubernetes send) end it alike.
  for (const std::string signal : {"INT", "TERM"}) {
    SCOPED_TRACE("SIG" + signal);
    const std::string out = Out("interrupted-" + signal);
    cmd = PackCommand(out);
    cmd.insert(cmd.end(), {"--check", "decode", "--threads", "1"});
    std::string shell;
    for (const std::string& a : cmd) shell += "'" + a + "' ";
    // The command in the background; SIGINT once its first shard is journaled.
    const std::string script = shell + "2> '" + dir_.Sub("stderr") + "' & pid=$!; while [ ! -e '" + out +
                               "/pack-journal.json' ]; do sleep 0.01; done; kill -" + signal +
                               " $pid; wait $pid; echo \"exit $?\"";
    ASSERT_EQ(RunCommand({"/bin/sh", "-c", script}, &output), 0);
    EXPECT_EQ(output, "exit 130\n");
    const std::string err = testing::ReadFile(dir_.Sub("stderr"));
    EXPECT_EQ(err.rfind("pack failed: interrupted after ", 0), 0u) << err;
    EXPECT_NE(err.find("kept in " + out + "; rerun the same command with --resume to continue\n"), std::string::npos)
        << err;
    EXPECT_FALSE(fs::exists(out + "/manifest.json"));
    for (const auto& [name, bytes] : Files(out)) EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
    // verify (and stat, through the same manifest reader) say what the folder holds and how to finish it.
    EXPECT_NE(RunCommand({SHARDPACK_CLI, "verify", out}, &output), 0);
    EXPECT_EQ(output,
              "verify failed: " + out + "/manifest.json does not exist: " + out +
                  " holds an interrupted pack; rerun the same pack (or convert) command with --resume to finish it\n");
    EXPECT_NE(RunCommand(cmd, &output), 0);  // without --resume: refused, saying what to do
    EXPECT_EQ(output, "pack failed: output folder " + out +
                          " holds an interrupted pack; pass --resume to continue it or --force to start over\n");
    cmd.push_back("--resume");
    ASSERT_EQ(RunCommand(cmd, &output), 0) << output;
    // --threads does not change the output.
    EXPECT_EQ(Difference(Files(out), Files(Out("reference"))), "");
  }
}

// LMDB writes through its memory map, outside the Env: its kill points are the pack's other file
// operations, and --resume starts it over.
INSTANTIATE_TEST_SUITE_P(Formats, ResumeTest, ::testing::Values("wds", "raw", "lmdb"));
INSTANTIATE_TEST_SUITE_P(Formats, CtrlCTest, ::testing::Values("wds", "raw"));

class ResumeRefusals : public testing::DatasetTest {};

TEST_F(ResumeRefusals, AnotherSourceOrOptionsOrAFinishedDifferentDataset) {
  MakeTree(2, 5);
  std::string output;
  const std::vector<std::string> base = {SHARDPACK_CLI, "pack", src(), out(), "--no-sync", "--quiet"};
  // A finished pack whose manifest is gone (as if killed just before writing it, journal lost too).
  std::vector<std::string> cmd = base;
  cmd.insert(cmd.end(), {"--samples-per-shard", "3"});
  ASSERT_EQ(RunCommand(cmd, &output), 0) << output;
  fs::remove(out() + "/manifest.json");
  cmd = base;
  cmd.insert(cmd.end(), {"--samples-per-shard", "2", "--resume"});
  // No journal (the run finished, then lost its manifest): resume starts afresh and succeeds.
  ASSERT_EQ(RunCommand(cmd, &output), 0) << output;
  // A finished dataset with other options is not resumed, and not overwritten without --force.
  cmd = base;
  cmd.insert(cmd.end(), {"--samples-per-shard", "3", "--resume"});
  EXPECT_NE(RunCommand(cmd, &output), 0);
  EXPECT_EQ(output, "pack failed: output folder " + out() +
                        " holds a finished dataset packed from another source or with other options; use --force to "
                        "replace it\n");
  // The same options: already complete, nothing to do, and it says so (not "packed ... 0.0 MB/s").
  cmd = {SHARDPACK_CLI, "pack", src(), out(), "--no-sync", "--samples-per-shard", "2", "--resume"};
  const auto before = Files(out());
  ASSERT_EQ(RunCommand(cmd, &output), 0) << output;
  EXPECT_EQ(Files(out()), before);
  EXPECT_EQ(output, out() + " already holds this dataset, finished (10 samples in 5 shards, " +
                        FormatBytes(TotalShardBytes(out())) + "): --resume did nothing\n");
}

// A pack that fails before anything is kept leaves no OUT it made (an empty folder looks like a
// start); an OUT that was there stays.
TEST_F(ResumeRefusals, AFailedPackRemovesTheEmptyOutItMade) {
  MakeTree(2, 5);
  std::string output;
  const std::string made = out() + "-made";
  EXPECT_NE(RunCommand({SHARDPACK_CLI, "pack", src(), made, "--strict", "--max-pixels", "1"}, &output), 0);
  EXPECT_NE(output.find("pack failed: "), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(made));
  const std::string there = out() + "-there";
  fs::create_directories(there);
  EXPECT_NE(RunCommand({SHARDPACK_CLI, "pack", src(), there, "--strict", "--max-pixels", "1"}, &output), 0);
  EXPECT_TRUE(fs::is_directory(there));
}

}  // namespace
}  // namespace shardpack
