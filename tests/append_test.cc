// shardpack append (issue 42): appending in steps gives what one pack of the union gives, new
// classes get the next labels and old ones keep theirs, options that differ are refused naming the
// flag, and a kill at any point leaves the dataset as it was or as it is after the append, verifying
// either way, which `append --resume` then completes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <set>

#include "ground/dataset_lock.h"
#include "ground/sample_keys.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/pack.h"
#include "shardpack/verify.h"
#include "shardpack/writer.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/run_command.h"

namespace shardpack {
namespace {

namespace fs = std::filesystem;
using testing::Difference;
using testing::Files;
using testing::RunCommand;
using testing::Sanitized;

class AppendTest : public testing::DatasetTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // `count` images of class `name` into folder `root`: JPEGs, every third a PNG, distinct pixels.
  void AddClass(const std::string& root, const std::string& name, int count, uint64_t seed) {
    for (int i = 0; i < count; ++i) {
      const ImageFormat f = i % 3 == 2 ? ImageFormat::kPng : ImageFormat::kJpeg;
      testing::WriteFile(root + "/" + name + "/img" + std::to_string(i) + (f == ImageFormat::kPng ? ".png" : ".jpg"),
                         testing::MakeImage(f, 20 + i, 18 + int(seed % 7), seed * 1000 + uint64_t(i)));
    }
  }

  PackOptions Options() {
    PackOptions o = QuietOptions();
    o.format = testing::FormatNamed(GetParam());
    o.samples_per_shard = 4;
    if (GetParam() == "raw") o.crop_height = o.crop_width = 16;
    return o;
  }

  // The command line that packs or appends as Options() does.
  std::vector<std::string> Command(const std::string& verb, const std::string& a, const std::string& b) const {
    std::vector<std::string> cmd = {SHARDPACK_CLI,         verb, a,           b,        "--format", GetParam(),
                                    "--samples-per-shard", "4",  "--no-sync", "--quiet"};
    if (GetParam() == "raw") cmd.insert(cmd.end(), {"--crop", "16"});
    return cmd;
  }

  // Every sample of the dataset in `dir` as (key, label, its bytes: the image file's for wds, the
  // pixels for raw), in order.
  std::vector<std::tuple<std::string, int32_t, std::string>> Samples(const std::string& dir) {
    std::unique_ptr<DatasetReader> reader;
    EXPECT_TRUE(DatasetReader::Open(dir, nullptr, &reader).ok());
    std::vector<std::tuple<std::string, int32_t, std::string>> samples;
    if (reader == nullptr) return samples;
    for (uint64_t i = 0; i < reader->size(); ++i) {
      ReadSample s;
      EXPECT_TRUE(reader->Read(i, &s).ok()) << i;
      samples.emplace_back(s.key, s.label,
                           GetParam() == "raw" ? std::string(s.pixels.rgb.begin(), s.pixels.rgb.end()) : s.encoded);
    }
    return samples;
  }

  bool Verifies(const std::string& dir) {
    VerifyReport report;
    return Verify(dir, VerifyOptions(), &report).ok() && report.clean();
  }
};

// Classes a and b, then c, then d, each a multiple of the shard size: the three steps write the
// shards one pack of all four classes writes, byte for byte, and the same samples, keys and labels.
TEST_P(AppendTest, ThreeStepsEqualOnePackOfTheUnion) {
  const std::string a = dir_.Sub("a"), b = dir_.Sub("b"), c = dir_.Sub("c"), all = dir_.Sub("all");
  AddClass(a, "cat", 8, 1), AddClass(a, "cow", 4, 2), AddClass(b, "dog", 8, 3), AddClass(c, "eel", 4, 4);
  for (const auto& [from, name, seed, count] :
       {std::tuple{a, "cat", 1, 8}, {a, "cow", 2, 4}, {b, "dog", 3, 8}, {c, "eel", 4, 4}}) {
    AddClass(all, name, count, uint64_t(seed));
  }
  PackResult r;
  ASSERT_TRUE(Pack(all, dir_.Sub("one") + "/ds", Options(), &r).ok());
  const Manifest one = r.manifest;
  const std::string ds = dir_.Sub("steps") + "/ds";
  ASSERT_TRUE(Pack(a, ds, Options(), &r).ok());
  ASSERT_TRUE(Append(b, ds, Options(), &r).ok());
  EXPECT_EQ(r.manifest.generation, 1u);
  ASSERT_TRUE(Append(c, ds, Options(), &r).ok());
  EXPECT_EQ(r.manifest.generation, 2u);
  EXPECT_EQ(r.manifest.samples, 24u);
  EXPECT_EQ(r.manifest.classes, (std::vector<std::string>{"cat", "cow", "dog", "eel"}));
  EXPECT_EQ(r.manifest.classes, one.classes);
  ASSERT_EQ(r.manifest.shards.size(), one.shards.size());
  for (size_t i = 0; i < one.shards.size(); ++i) {
    EXPECT_EQ(r.manifest.shards[i].file, one.shards[i].file);
    EXPECT_EQ(r.manifest.shards[i].xxh64, one.shards[i].xxh64) << one.shards[i].file;
    EXPECT_EQ(r.manifest.shards[i].sample_table.xxh64, one.shards[i].sample_table.xxh64);
  }
  auto steps = Files(ds), whole = Files(dir_.Sub("one") + "/ds");
  steps.erase("manifest.json"), whole.erase("manifest.json");  // the generation differs
  EXPECT_EQ(Difference(steps, whole), "");
  EXPECT_EQ(Samples(ds), Samples(dir_.Sub("one") + "/ds"));
  EXPECT_TRUE(Verifies(ds));
  EXPECT_FALSE(fs::exists(ds + "/" + kAppendStagingFolder));
}

// An append whose classes overlap the dataset's: the dataset's keep their labels, the new ones come
// after them in sorted order, keys continue after the dataset's samples, and each sample holds the
// bytes of its source file (wds; raw stores pixels). A class folder empty before that gets images is
// empty no more; one new and empty is listed empty.
TEST_P(AppendTest, NewClassesTakeTheNextLabelsAndOldOnesKeepTheirs) {
  const std::string a = dir_.Sub("a"), b = dir_.Sub("b"), ds = dir_.Sub("ds");
  AddClass(a, "bee", 3, 1), AddClass(a, "fox", 2, 2);
  fs::create_directories(a + "/zzz");
  AddClass(b, "ant", 2, 3), AddClass(b, "fox", 2, 4), AddClass(b, "yak", 1, 5), AddClass(b, "zzz", 1, 6);
  fs::create_directories(b + "/qqq");
  PackResult r;
  ASSERT_TRUE(Pack(a, ds, Options(), &r).ok());
  EXPECT_EQ(r.manifest.empty_classes, std::vector<std::string>{"zzz"});
  ASSERT_TRUE(Append(b, ds, Options(), &r).ok());
  EXPECT_EQ(r.manifest.classes, (std::vector<std::string>{"bee", "fox", "zzz", "ant", "qqq", "yak"}));
  EXPECT_EQ(r.manifest.empty_classes, std::vector<std::string>{"qqq"});
  const auto samples = Samples(ds);
  ASSERT_EQ(samples.size(), 11u);
  // The appended samples in b's scan order (ant, fox, yak, zzz): keys 5 to 10.
  const std::vector<std::pair<std::string, int32_t>> added = {{"ant/img0.jpg", 3}, {"ant/img1.jpg", 3},
                                                              {"fox/img0.jpg", 1}, {"fox/img1.jpg", 1},
                                                              {"yak/img0.jpg", 5}, {"zzz/img0.jpg", 2}};
  for (size_t i = 0; i < added.size(); ++i) {
    const auto& [key, label, bytes] = samples[5 + i];
    EXPECT_EQ(key, IndexKey(5 + i));
    EXPECT_EQ(label, added[i].second) << added[i].first;
    if (GetParam() == "wds") {
      EXPECT_EQ(bytes, testing::ReadFile(b + "/" + added[i].first)) << added[i].first;
    }
  }
  EXPECT_EQ(std::get<1>(samples[0]), 0);  // bee
  EXPECT_EQ(std::get<1>(samples[3]), 1);  // fox, packed first
  EXPECT_TRUE(Verifies(ds));
}

TEST_P(AppendTest, WhatCannotBeAppendedIsRefusedNamingTheFix) {
  const std::string a = dir_.Sub("a"), ds = dir_.Sub("ds");
  AddClass(a, "bee", 3, 1);
  PackResult r;
  ASSERT_TRUE(Pack(a, ds, Options(), &r).ok());
  const std::string before = testing::ReadFile(ds + "/manifest.json");
  PackOptions other = Options();
  other.samples_per_shard = 5;
  Status s = Append(a, ds, other, &r);
  EXPECT_EQ(s.message(), ds + " was packed with samples_per_shard 4, this append gives 5 (--samples-per-shard): append "
                              "with the options the dataset was packed with (its manifest.json's \"options\")");
  other = Options();
  other.format = GetParam() == "wds" ? DatasetFormat::kRaw : DatasetFormat::kWebDataset;
  other.crop_height = other.crop_width = other.format == DatasetFormat::kRaw ? 16 : 0;
  s = Append(a, ds, other, &r);
  EXPECT_EQ(s.message(), ds + " is a " + GetParam() + " dataset, and this append gives --format " +
                             (GetParam() == "wds" ? "raw" : "wds"));
  s = Append(a, dir_.Sub("nothing"), Options(), &r);
  EXPECT_EQ(s.message(), dir_.Sub("nothing") + " holds no dataset (no manifest.json): pack it first");
  testing::WriteFile(dir_.Sub("flat") + "/x.jpg", testing::MakeImage(ImageFormat::kJpeg, 20, 20, 9));
  s = Append(dir_.Sub("flat"), ds, Options(), &r);
  EXPECT_EQ(s.message(), ds + "'s samples are labelled by class (1 classes) but " + dir_.Sub("flat") +
                             " names no class: put its images in class folders (or a --list with class names), as "
                             "the dataset was packed");
  EXPECT_EQ(testing::ReadFile(ds + "/manifest.json"), before);  // none of it changed the dataset
  EXPECT_FALSE(fs::exists(ds + "/" + kAppendStagingFolder));
}

// One run at a time adds to a dataset: while another holds the folder's lock, an append and an
// appending Writer are refused at once, naming it, and the dataset is untouched. Then two real
// appends started together, round after round: each either appends or is refused with that message,
// and the dataset always verifies and holds exactly the samples of the appends that reported success
// (before, two appends together left a dataset that did not verify in 2 of 14 runs).
TEST_P(AppendTest, OneRunAtATimeAddsToADatasetAndTheSecondIsToldWhichHoldsIt) {
  const std::string a = dir_.Sub("a"), b = dir_.Sub("b"), c = dir_.Sub("c"), ds = dir_.Sub("ds");
  AddClass(a, "bee", 4, 1), AddClass(b, "ant", 4, 2), AddClass(c, "cat", 4, 3);
  PackResult r;
  ASSERT_TRUE(Pack(a, ds, Options(), &r).ok());
  const std::string before = testing::ReadFile(ds + "/manifest.json");
  {
    std::unique_ptr<DatasetFolderLock> held;
    ASSERT_TRUE(LockDatasetFolder(Env::Default(), ds, "an append of /data/more", &held).ok());
    const std::string holder = "an append of /data/more (process " + std::to_string(::getpid());
    Status s = Append(b, ds, Options(), &r);
    EXPECT_EQ(s.code(), Status::Code::kAborted);
    EXPECT_EQ(s.message().substr(0, ds.size() + 21 + holder.size()), ds + " is being written by " + holder);
    EXPECT_NE(s.message().find("): wait for it to finish, then run this again (one run at a time may add to a "
                               "dataset)"),
              std::string::npos)
        << s.message();
    WriterOptions wo;
    wo.pack = Options();
    wo.append = true;
    std::unique_ptr<SampleWriter> writer;
    s = SampleWriter::Open(ds, wo, &writer);
    EXPECT_EQ(s.message().substr(0, ds.size() + 21 + holder.size()), ds + " is being written by " + holder);
    EXPECT_EQ(testing::ReadFile(ds + "/manifest.json"), before);
  }
  uint64_t expected = 4;
  for (int round = 0; round < 6; ++round) {
    std::string out_b, out_c;
    auto first = std::async(std::launch::async, [&] { return RunCommand(Command("append", ds, b), &out_b); });
    auto second = std::async(std::launch::async, [&] { return RunCommand(Command("append", ds, c), &out_c); });
    int succeeded = 0;
    for (auto [status, output] : {std::make_pair(first.get(), &out_b), std::make_pair(second.get(), &out_c)}) {
      if (status == 0) {
        expected += 4;
        ++succeeded;
      } else {
        EXPECT_EQ(WEXITSTATUS(status), 1) << *output;
        EXPECT_NE(output->find(ds + " is being written by an append of "), std::string::npos) << *output;
      }
    }
    EXPECT_GE(succeeded, 1) << "round " << round;  // the lock refuses only while the other one runs
    EXPECT_TRUE(Verifies(ds)) << "round " << round;
    EXPECT_EQ(Samples(ds).size(), expected) << "round " << round;
  }
}

// `shardpack append OUT SRC` with no pack flag takes the dataset's own options (format, samples a
// shard, crop, ...) and writes what an append with every flag written out writes; flags that are
// given must equal the dataset's, and every one that differs is named in one message. (The code
// before took the CLI's defaults: wds and 100,000 samples a shard, refused one option per run.)
TEST_P(AppendTest, WithoutFlagsAnAppendTakesTheDatasetsOwnOptions) {
  const std::string a = dir_.Sub("a"), b = dir_.Sub("b"), plain = dir_.Sub("plain") + "/ds";
  AddClass(a, "bee", 5, 1), AddClass(b, "ant", 6, 2);
  std::string output;
  ASSERT_EQ(RunCommand(Command("pack", a, plain), &output), 0) << output;
  fs::create_directories(dir_.Sub("flagged"));
  fs::copy(plain, dir_.Sub("flagged") + "/ds", fs::copy_options::recursive);
  const std::string flagged = dir_.Sub("flagged") + "/ds";
  ASSERT_EQ(RunCommand({SHARDPACK_CLI, "append", plain, b, "--no-sync", "--quiet"}, &output), 0) << output;
  ASSERT_EQ(RunCommand(Command("append", flagged, b), &output), 0) << output;
  const auto files = Files(plain);
  EXPECT_EQ(Difference(files, Files(flagged)), "");
  EXPECT_GT(files.size(), 8u);  // 11 samples in shards of 4: 3 shards, with their side files
  const std::string before = testing::ReadFile(plain + "/manifest.json");
  std::vector<std::string> differ = {SHARDPACK_CLI, "append",   plain,  b,           "--samples-per-shard",
                                     "5",           "--prefix", "part", "--no-sync", "--quiet"};
  EXPECT_EQ(RunCommand(differ, &output), 256) << output;
  EXPECT_EQ(output,
            "append failed: " + plain + " was packed with prefix \"shard\", this append gives \"part\" " +
                "(--prefix); with samples_per_shard 4, this append gives 5 (--samples-per-shard): leave those " +
                "flags out (an append takes the dataset's own options), or give them as its manifest.json's " +
                "\"options\" records them\n");
  EXPECT_EQ(testing::ReadFile(plain + "/manifest.json"), before);
}

// An LMDB environment cannot be appended to: one refusal saying so and what to do, whatever flags
// (it invited --format lmdb, which was then refused).
TEST(AppendLmdb, IsRefusedOnceWithTheWayOut) {
  testing::TempDir dir;
  const std::string src = dir.Sub("src"), ds = dir.Sub("ds");
  testing::WriteFile(src + "/bee/x.jpg", testing::MakeImage(ImageFormat::kJpeg, 20, 20, 1));
  std::string output;
  ASSERT_EQ(RunCommand({SHARDPACK_CLI, "pack", src, ds, "--format", "lmdb", "--no-sync", "--quiet"}, &output), 0)
      << output;
  const std::string refusal = "append failed: " + ds +
                              " is an lmdb dataset, one environment file, which append cannot add to without "
                              "rewriting it: convert it to wds or raw (shardpack convert " +
                              ds + " NEW --format wds) and append to that, or pack again with the new images\n";
  EXPECT_EQ(RunCommand({SHARDPACK_CLI, "append", ds, src, "--no-sync"}, &output), 256);
  EXPECT_EQ(output, refusal);
  EXPECT_EQ(RunCommand({SHARDPACK_CLI, "append", ds, src, "--format", "lmdb", "--no-sync"}, &output), 256);
  EXPECT_EQ(output, refusal);
}

// A requeued job that always passes --resume: after its append finished, `append --resume` of the
// same source does nothing (it appended every sample again, a generation more). A first run with
// --resume appends, and a different source is appended as usual.
TEST_P(AppendTest, ResumeAfterAFinishedAppendDoesNothing) {
  const std::string a = dir_.Sub("a"), b = dir_.Sub("b"), c = dir_.Sub("c"), ds = dir_.Sub("ds");
  AddClass(a, "bee", 4, 1), AddClass(b, "ant", 5, 2), AddClass(c, "cat", 3, 3);
  PackResult r;
  ASSERT_TRUE(Pack(a, ds, Options(), &r).ok());
  PackOptions resume = Options();
  resume.resume = true;
  ASSERT_TRUE(Append(b, ds, resume, &r).ok());  // nothing interrupted: appends
  EXPECT_FALSE(r.already_appended);
  EXPECT_EQ(r.manifest.samples, 9u);
  EXPECT_EQ(r.manifest.generation, 1u);
  const std::string after = testing::ReadFile(ds + "/manifest.json");
  std::vector<std::string> again = Command("append", ds, b);
  again.push_back("--resume");
  std::string output;
  ASSERT_EQ(RunCommand(again, &output), 0) << output;
  EXPECT_EQ(output, ds + "'s generation 1 is already this append of " + b + " (finished): --resume did nothing\n");
  EXPECT_EQ(testing::ReadFile(ds + "/manifest.json"), after);
  ASSERT_TRUE(Append(c, ds, resume, &r).ok());
  EXPECT_FALSE(r.already_appended);
  EXPECT_EQ(r.manifest.samples, 12u);
  ASSERT_TRUE(Append(c, ds, resume, &r).ok());
  EXPECT_TRUE(r.already_appended);
  EXPECT_EQ(r.manifest.samples, 12u);
  EXPECT_EQ(Samples(ds).size(), 12u);
}

// SIGKILL at about 30 points spread over an append and at each of its last 16 file operations
// (publishing: the moves, the manifest, the staging folder's removal): the dataset verifies, as the
// one before (its manifest untouched) or the one after (every file as an uninterrupted append
// leaves it), and `append --resume` then ends where the uninterrupted append does.
TEST_P(AppendTest, AKillAnywhereLeavesTheOldOrTheNewDatasetAndResumeCompletesIt) {
  const std::string a = dir_.Sub("a"), b = dir_.Sub("b"), base = dir_.Sub("base") + "/ds";
  AddClass(a, "bee", 6, 1), AddClass(b, "ant", 7, 2), AddClass(b, "bee", 6, 3);
  testing::WriteFile(b + "/ant/notes.txt", "not an image");  // a skip
  std::string output;
  ASSERT_EQ(RunCommand(Command("pack", a, base), &output), 0) << output;
  const auto old_files = Files(base);
  const auto copy_of_base = [&](const std::string& parent) {
    fs::create_directories(dir_.Sub(parent));
    fs::copy(base, dir_.Sub(parent) + "/ds", fs::copy_options::recursive);
    return dir_.Sub(parent) + "/ds";
  };
  const std::string reference = copy_of_base("reference");
  ASSERT_EQ(RunCommand(Command("append", reference, b), &output), 0) << output;
  const auto new_files = Files(reference);
  const std::string counted = copy_of_base("counted");
  ASSERT_EQ(RunCommand({KILL_DRIVER, b, counted, GetParam(), "4", "0", "append"}, &output), 0) << output;
  ASSERT_EQ(Difference(Files(counted), new_files), "");  // the driver appends what the command line does
  const uint64_t operations = std::stoull(output.substr(output.find("operations ") + 11));
  ASSERT_GT(operations, 30u);
  const uint64_t spread = Sanitized() ? 8 : 30;
  std::set<uint64_t> points;
  for (uint64_t k = 1; k + 16 <= operations; k += std::max<uint64_t>(1, operations / spread)) points.insert(k);
  for (uint64_t k = operations - 15; k <= operations; ++k) points.insert(k);
  int old_seen = 0, new_seen = 0;
  for (const uint64_t k : points) {
    SCOPED_TRACE("killed at operation " + std::to_string(k) + " of " + std::to_string(operations));
    const std::string out_k = copy_of_base("k" + std::to_string(k));
    const int status = RunCommand({KILL_DRIVER, b, out_k, GetParam(), "4", std::to_string(k), "append"}, &output);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << output;
    EXPECT_TRUE(Verifies(out_k));
    const std::string manifest = testing::ReadFile(out_k + "/manifest.json");
    if (manifest == old_files.at("manifest.json")) {
      ++old_seen;
    } else {
      EXPECT_EQ(manifest, new_files.at("manifest.json"));
      EXPECT_EQ(Difference(Files(out_k), new_files), "");
      ++new_seen;
    }
    std::vector<std::string> resume = Command("append", out_k, b);
    resume.push_back("--resume");
    ASSERT_EQ(RunCommand(resume, &output), 0) << output;
    EXPECT_EQ(Difference(Files(out_k), new_files), "");
    EXPECT_FALSE(fs::exists(out_k + "/" + kAppendStagingFolder));
    fs::remove_all(dir_.Sub("k" + std::to_string(k)));
  }
  EXPECT_GT(old_seen, 0);
  EXPECT_GT(new_seen, 0);
}

INSTANTIATE_TEST_SUITE_P(Formats, AppendTest, ::testing::Values("wds", "raw"));

}  // namespace
}  // namespace shardpack
