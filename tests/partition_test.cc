// pack --partition I/N and merge (ops/pack/pack_partition.h): the split computed by hand, the
// environment of Slurm and Kubernetes, and packs in parts whose merged output is byte for byte the
// one-node pack's, also after a part was killed and resumed; and what merge refuses.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "ground/dataset_lock.h"
#include "ops/pack/pack_partition.h"
#include "shardpack/convert.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/verify.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

namespace fs = std::filesystem;

TEST(PlanPart, SplitsOnMultiplesOfTheShardSize) {
  // 23 inputs in shards of 4: 6 blocks. 3 parts take blocks [0,2), [2,4), [4,6).
  const uint64_t want[3][4] = {{0, 8, 0, 2}, {8, 16, 2, 4}, {16, 23, 4, 6}};
  for (uint32_t i = 0; i < 3; ++i) {
    PartPlan p;
    ASSERT_TRUE(PlanPart(23, 4, i, 3, &p).ok());
    EXPECT_EQ((std::vector<uint64_t>{p.begin, p.end, p.first_shard, p.end_shard}),
              (std::vector<uint64_t>(want[i], want[i] + 4)))
        << i;
  }
  // 4 parts of 6 blocks: 6*I/4 = 0, 1, 3, 4, 6.
  PartPlan p;
  ASSERT_TRUE(PlanPart(23, 4, 1, 4, &p).ok());
  EXPECT_EQ(p.begin, 4u);
  EXPECT_EQ(p.end, 12u);
  EXPECT_EQ(p.name, "part-00001-of-00004");
  EXPECT_EQ(p.manifest_file(), "part-00001-of-00004.json");
  // More parts than blocks: 5 inputs, 2 blocks, 3 parts: part 0 gets nothing.
  ASSERT_TRUE(PlanPart(5, 4, 0, 3, &p).ok());
  EXPECT_EQ(p.begin, p.end);
  ASSERT_TRUE(PlanPart(5, 4, 2, 3, &p).ok());
  EXPECT_EQ(p.begin, 4u);
  EXPECT_EQ(p.end, 5u);
  EXPECT_EQ(PlanPart(5, 4, 3, 3, &p).message(), "--partition 3/3: the part must lie in 0..2");
}

TEST(ResolvePartition, FromTheFlagSlurmAndKubernetes) {
  std::map<std::string, std::string> vars;
  const auto getenv = [&vars](const char* name) { return vars.count(name) ? vars[name].c_str() : nullptr; };
  uint32_t part = 0, parts = 0;
  ASSERT_TRUE(ResolvePartition("2/8", 0, getenv, &part, &parts).ok());
  EXPECT_EQ(part, 2u);
  EXPECT_EQ(parts, 8u);
  vars = {{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_MIN", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}};
  ASSERT_TRUE(ResolvePartition("slurm", 0, getenv, &part, &parts).ok());
  EXPECT_EQ(part, 2u);  // --array=3-6: task 5 is the third
  EXPECT_EQ(parts, 4u);
  // With --partitions the task id is the part: task 2 resubmitted alone (--array=2) is part 2 of 4.
  vars = {{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_MIN", "2"}, {"SLURM_ARRAY_TASK_COUNT", "1"}};
  ASSERT_TRUE(ResolvePartition("slurm", 4, getenv, &part, &parts).ok());
  EXPECT_EQ(part, 2u);
  EXPECT_EQ(parts, 4u);
  vars = {{"JOB_COMPLETION_INDEX", "7"}};
  ASSERT_TRUE(ResolvePartition("k8s", 10, getenv, &part, &parts).ok());
  EXPECT_EQ(part, 7u);
  EXPECT_EQ(parts, 10u);
  EXPECT_EQ(ResolvePartition("k8s", 0, getenv, &part, &parts).message(),
            "--partition k8s needs --partitions N (the Job's completions)");
  vars.clear();
  EXPECT_EQ(ResolvePartition("slurm", 0, getenv, &part, &parts).message(),
            "--partition slurm needs $SLURM_ARRAY_TASK_ID, which is not set (run it as a task of a job array: sbatch "
            "--array)");
  EXPECT_EQ(ResolvePartition("8/8", 0, getenv, &part, &parts).message(),
            "--partition 8/8: part 8 of 8 does not exist (parts are numbered from 0)");
  EXPECT_EQ(ResolvePartition("2-8", 0, getenv, &part, &parts).message(),
            "--partition takes I/N (part I of N, from 0), slurm or k8s, not '2-8'");
}

TEST(IsPartShardFile, OnlyThePartsOwnShardNumbers) {
  PartPlan p;
  ASSERT_TRUE(PlanPart(23, 4, 1, 3, &p).ok());  // shards 2 and 3
  for (const char* mine : {"shard-000002.tar", "shard-000003.idx", "shard-000002.tar.tmp", "shard-000003.labels.npy"})
    EXPECT_TRUE(IsPartShardFile(mine, "shard", p)) << mine;
  for (const char* other :
       {"shard-000001.tar", "shard-000004.tar", "manifest.json", "shard-2.tar", "x-000002.tar", "shard-000002"})
    EXPECT_FALSE(IsPartShardFile(other, "shard", p)) << other;
}

// Every file of a folder but the part manifests: name -> bytes.
std::map<std::string, std::string> DatasetFiles(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("part-", 0) != 0) files[name] = testing::ReadFile(e.path().string());
  }
  return files;
}

class PartitionedPack : public testing::DatasetTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { MakeTree(3, 7); }  // 21 images
  // shuffle: as pack_kill_driver packs (it does not shuffle) or with --shuffle --seed 7.
  PackOptions Options(bool shuffle = true) const {
    PackOptions o;
    o.format = testing::FormatNamed(GetParam());
    if (o.format == DatasetFormat::kRaw) o.crop_height = o.crop_width = 16;
    o.samples_per_shard = 4;
    o.shuffle = shuffle;
    o.seed = shuffle ? 7 : 0;
    o.sync = false;
    return o;
  }
  // Output folders all named "ds" (the manifest records the folder's name), in separate parents.
  std::string Ds(const std::string& parent) const { return out(parent) + "/ds"; }
  Status PackPart(const std::string& dir, uint32_t part, uint32_t parts, bool shuffle = true) {
    PackOptions o = Options(shuffle);
    o.partition = part;
    o.partitions = parts;
    PackResult r;
    return PackTo(dir, o, &r);
  }
};

TEST_P(PartitionedPack, MergedPartsAreByteIdenticalToTheOneNodePack) {
  PackResult r;
  ASSERT_TRUE(PackTo(Ds("whole"), Options(), &r).ok());
  for (uint32_t parts : {1u, 3u, 7u}) {  // 7 parts of 6 blocks: one part is empty
    const std::string dir = Ds("parts-" + std::to_string(parts));
    for (uint32_t i = parts; i-- > 0;) ASSERT_TRUE(PackPart(dir, i, parts).ok()) << i;  // any order
    if (parts > 1) {
      MergeResult m;
      ASSERT_TRUE(Merge(dir, {}, &m).ok());
      EXPECT_EQ(m.parts, parts);
      EXPECT_EQ(m.manifest.samples, 21u);
    }
    EXPECT_EQ(DatasetFiles(dir), DatasetFiles(Ds("whole"))) << parts << " parts";
  }
}

TEST_P(PartitionedPack, AKilledPartResumesAndMergeWaitsForIt) {
  PackResult r;
  ASSERT_TRUE(PackTo(Ds("whole"), Options(false), &r).ok());
  const std::string dir = Ds("parts");
  ASSERT_TRUE(PackPart(dir, 0, 3, false).ok());
  ASSERT_TRUE(PackPart(dir, 2, 3, false).ok());
  // Part 1 (2 shards), killed by its Env two thirds into its file operations (past its first shard).
  const std::string driver = std::string(KILL_DRIVER) + " '" + src() + "' '" + dir + "' " + GetParam() + " 4 ";
  std::string count_dir = Ds("count");
  FILE* p = ::popen(
      (std::string(KILL_DRIVER) + " '" + src() + "' '" + count_dir + "' " + GetParam() + " 4 0 1/3").c_str(), "r");
  ASSERT_NE(p, nullptr);
  unsigned long long ops = 0;
  ASSERT_EQ(std::fscanf(p, "operations %llu", &ops), 1);
  ::pclose(p);
  ASSERT_NE(std::system((driver + std::to_string(ops * 2 / 3) + " 1/3 2>/dev/null").c_str()), 0);
  MergeResult m;
  EXPECT_EQ(Merge(dir, {}, &m).message(),
            "part 1 of 3 is unfinished (its journal part-00001-of-00003.journal.json is there): rerun it with "
            "--resume; nothing was written");
  EXPECT_FALSE(fs::exists(dir + "/manifest.json"));
  // Without --resume the part refuses; with it, it finishes, and the merge equals the whole pack.
  EXPECT_EQ(PackPart(dir, 1, 3, false).message(),
            dir + "/part-00001-of-00003.journal.json: part 1 of 3 was interrupted here; pass --resume to continue it");
  PackOptions o = Options(false);
  o.partition = 1;
  o.partitions = 3;
  o.resume = true;
  ASSERT_TRUE(PackTo(dir, o, &r).ok());
  ASSERT_TRUE(Merge(dir, {}, &m).ok());
  EXPECT_EQ(DatasetFiles(dir), DatasetFiles(Ds("whole")));
}

// Cut by size, the parts split the input evenly and name their shards after themselves: the
// samples, read back in order, are the one-node pack's; the shard boundaries are the parts' own.
TEST_P(PartitionedPack, PartsCutBySizeHoldTheOneNodePacksSamplesInOrder) {
  PackOptions o = Options();
  o.samples_per_shard = 100000;
  o.shard_size_bytes = GetParam() == "raw" ? 4096 : 8192;
  PackResult r;
  ASSERT_TRUE(PackTo(Ds("whole"), o, &r).ok());
  ASSERT_GT(r.manifest.shards.size(), 2u);
  const std::string dir = Ds("parts");
  o.partition_by_count = false;
  o.partitions = 3;
  for (uint32_t i = 0; i < 3; ++i) {
    o.partition = i;
    ASSERT_TRUE(PackTo(dir, o, &r).ok()) << i;
  }
  MergeResult m;
  ASSERT_TRUE(Merge(dir, {}, &m).ok());
  for (const ShardEntry& shard : m.manifest.shards) {
    EXPECT_EQ(shard.file.rfind("shard-p0000", 0), 0u) << shard.file;
  }
  std::unique_ptr<DatasetReader> whole, parts;
  ASSERT_TRUE(DatasetReader::Open(Ds("whole"), nullptr, &whole).ok());
  ASSERT_TRUE(DatasetReader::Open(dir, nullptr, &parts).ok());
  ASSERT_EQ(parts->size(), 21u);
  ASSERT_EQ(whole->size(), 21u);
  for (uint64_t i = 0; i < 21; ++i) {
    ReadSample a, b;
    ASSERT_TRUE(whole->Read(i, &a).ok());
    ASSERT_TRUE(parts->Read(i, &b).ok());
    EXPECT_EQ(a.key, b.key) << i;
    EXPECT_EQ(a.label, b.label) << i;
    EXPECT_TRUE(a.encoded == b.encoded && a.pixels.rgb == b.pixels.rgb) << i;
  }
  VerifyReport report;
  ASSERT_TRUE(Verify(dir, VerifyOptions(), &report).ok());
  EXPECT_TRUE(report.clean()) << report.problems.front().what;
}

INSTANTIATE_TEST_SUITE_P(Formats, PartitionedPack, ::testing::Values("wds", "raw"));

// convert takes --partition too, from a dataset whose size its manifest gives.
TEST_P(PartitionedPack, ConvertInPartsEqualsTheWholeConvert) {
  PackOptions o;
  o.sync = false;
  PackResult r;
  ASSERT_TRUE(PackTo(out("wds"), o, &r).ok());
  PackOptions c = Options(false);
  c.samples_per_shard = 5;
  ASSERT_TRUE(Convert(out("wds"), Ds("whole"), c, &r).ok());
  c.partitions = 2;
  for (uint32_t i = 0; i < 2; ++i) {
    c.partition = i;
    ASSERT_TRUE(Convert(out("wds"), Ds("parts"), c, &r).ok()) << i;
  }
  MergeResult m;
  ASSERT_TRUE(Merge(Ds("parts"), {}, &m).ok());
  EXPECT_EQ(DatasetFiles(Ds("parts")), DatasetFiles(Ds("whole")));
}

class MergeRefuses : public testing::DatasetTest {
 protected:
  void SetUp() override { MakeTree(2, 5); }  // 10 images
  Status PackPart(uint32_t part, uint32_t parts, uint64_t seed = 0) {
    PackOptions o;
    o.samples_per_shard = 3;
    o.sync = false;
    o.shuffle = true;
    o.seed = seed;
    o.partition = part;
    o.partitions = parts;
    PackResult r;
    return PackTo(out(), o, &r);
  }
};

TEST_F(MergeRefuses, AMissingPartOtherOptionsOrNoPartsAtAll) {
  MergeResult m;
  ASSERT_TRUE(fs::create_directories(out()));
  EXPECT_EQ(Merge(out(), {}, &m).message(),
            out() +
                " holds no part manifests (part-NNNNN-of-NNNNN.json or writer-NNNNN-of-NNNNN.json): pack the parts "
                "first (shardpack pack SRC OUT --partition I/N), or close the writers");
  ASSERT_TRUE(PackPart(0, 2).ok());
  EXPECT_EQ(Merge(out(), {}, &m).message(),
            "part 1 of 2 is missing (no part-00001-of-00002.json): run it with --partition 1/2; nothing was written");
  ASSERT_TRUE(PackPart(1, 2, /*seed=*/9).ok());
  EXPECT_EQ(Merge(out(), {}, &m).message(),
            out() + "/part-00001-of-00002.json was packed with another source, input or options than " + out() +
                "/part-00000-of-00002.json; rerun that part with the same source and options");
  EXPECT_FALSE(fs::exists(out() + "/manifest.json"));
}

TEST(PartManifestName, AnyNumberOfDigitsAsPartNameWritesThem) {
  uint32_t part = 0, parts = 0;
  bool writer = true;
  ASSERT_TRUE(ParsePartManifestName("part-00007-of-100000.json", &part, &parts, &writer));
  EXPECT_FALSE(writer);
  EXPECT_EQ(part, 7u);
  EXPECT_EQ(parts, 100000u);
  ASSERT_TRUE(ParsePartManifestName("part-4294967294-of-4294967295.json", &part, &parts, &writer));
  EXPECT_EQ(part, 4294967294u);
  for (const char* other : {"part-0007-of-00008.json", "part-00007-of-00008.journal.json", "part-+0007-of-00008.json",
                            "part-00007-of-00008.json.tmp", "part- 0007-of-00008.json", "part-000007-of-00008.json",
                            "part-00007-of-4294967296.json"}) {
    EXPECT_FALSE(ParsePartManifestName(other, &part, &parts, &writer)) << other;
  }
  // A SampleWriter's parts (shardpack/writer.h) have names of their own.
  ASSERT_TRUE(ParsePartManifestName("writer-00002-of-00003.json", &part, &parts, &writer));
  EXPECT_EQ(part, 2u);
  EXPECT_EQ(parts, 3u);
  EXPECT_TRUE(writer);
  EXPECT_FALSE(ParsePartManifestName("writer-00002-of-00003.journal.json", &part, &parts, &writer));
  EXPECT_FALSE(ParsePartManifestName("writers-00002-of-00003.json", &part, &parts, &writer));
}

TEST_F(MergeRefuses, PartsOfSixDigitsAreFound) {
  ASSERT_TRUE(PackPart(0, 100000).ok());
  ASSERT_TRUE(fs::exists(out() + "/part-00000-of-100000.json"));
  MergeResult m;
  EXPECT_EQ(Merge(out(), {}, &m).message(),
            "part 1 of 100000 is missing (no part-00001-of-100000.json): run it with --partition 1/100000; nothing "
            "was written");
}

// A part manifest is outside input: every name it lists is a file of OUT, listed by one part only.
TEST_F(MergeRefuses, NamesAPartManifestListsThatAreNotItsFiles) {
  ASSERT_TRUE(PackPart(0, 2).ok());
  ASSERT_TRUE(PackPart(1, 2).ok());
  const std::string part1 = out() + "/part-00001-of-00002.json";
  std::string original;
  ASSERT_TRUE(Env::Default()->ReadFile(part1, 1 << 20, &original).ok());
  const auto with_first_shard = [&](const std::string& name) {
    nlohmann::json j = nlohmann::json::parse(original);
    j["shardlist"][0]["url"] = name;
    testing::WriteFile(part1, j.dump(2));
  };
  MergeResult m;
  with_first_shard("../elsewhere.tar");
  EXPECT_EQ(Merge(out(), {}, &m).message(),
            part1 +
                ": the manifest lists '../elsewhere.tar', which is not a file inside the dataset folder: refused (a "
                "manifest must not send a reader elsewhere)");
  with_first_shard("%2e%2e/elsewhere.tar");
  EXPECT_EQ(Merge(out(), {}, &m).code(), Status::Code::kDataLoss);
  const std::string part0_first = nlohmann::json::parse([&] {
    std::string t;
    EXPECT_TRUE(Env::Default()->ReadFile(out() + "/part-00000-of-00002.json", 1 << 20, &t).ok());
    return t;
  }())["shardlist"][0]["url"];
  with_first_shard(part0_first);
  EXPECT_EQ(Merge(out(), {}, &m).message(), part1 + " and " + out() + "/part-00000-of-00002.json both list " +
                                                part0_first + "; rerun those parts (nothing was written)");
  with_first_shard("shard-999999.tar");
  EXPECT_EQ(Merge(out(), {}, &m).message(), part1 + " lists shard-999999.tar, which is not in " + out() +
                                                "; rerun that part with --resume (nothing was written)");
  EXPECT_FALSE(fs::exists(out() + "/manifest.json"));
  testing::WriteFile(part1, original);
  EXPECT_TRUE(Merge(out(), {}, &m).ok());
}

// Two merges at once: one writes the manifest, the other is told so; never half a manifest. Real
// processes (fork), as two job steps would be.
TEST_F(MergeRefuses, ASecondMergeWhileOneRunsIsToldSo) {
  ASSERT_TRUE(PackPart(0, 2).ok());
  ASSERT_TRUE(PackPart(1, 2).ok());
  MergeResult m;
  {
    std::unique_ptr<DatasetFolderLock> held;  // as a running merge holds it
    ASSERT_TRUE(LockDatasetFolder(Env::Default(), out(), "a merge", &held).ok());
    const Status s = Merge(out(), {}, &m);
    EXPECT_EQ(s.code(), Status::Code::kAborted);
    const std::string said = out() + " is being written by a merge (process " + std::to_string(::getpid());
    EXPECT_EQ(s.message().substr(0, said.size()), said);
    EXPECT_FALSE(fs::exists(out() + "/manifest.json"));
  }
  std::vector<pid_t> pids;
  for (int k = 0; k < 4; ++k) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int done = 0;
      for (int round = 0; round < 20; ++round) {
        MergeResult r;
        const Status s = Merge(out(), {}, &r);
        if (s.ok())
          ++done;
        else if (s.code() != Status::Code::kAborted)
          std::_Exit(2);
        Manifest written;  // whatever the moment, the manifest there is whole
        if (fs::exists(out() + "/manifest.json") && !ReadManifest(Env::Default(), out(), &written).ok()) std::_Exit(3);
      }
      std::_Exit(done > 0 ? 0 : 1);
    }
    pids.push_back(pid);
  }
  int merged = 0;
  for (const pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) <= 1) << "exit " << WEXITSTATUS(status);
    merged += WEXITSTATUS(status) == 0;
  }
  EXPECT_GE(merged, 1);
  EXPECT_FALSE(fs::exists(out() + "/manifest.json.tmp"));
  Manifest written;
  EXPECT_TRUE(ReadManifest(Env::Default(), out(), &written).ok());
  EXPECT_EQ(written.samples, 10u);
}

TEST_F(MergeRefuses, LmdbAndForceArePackedWhole) {
  PackOptions o;
  o.format = DatasetFormat::kLmdb;
  o.partition = 0;
  o.partitions = 2;
  PackResult r;
  EXPECT_EQ(PackTo(out(), o, &r).message(),
            "--partition: the lmdb format writes one file, which cannot be packed in parts; pack wds or raw in parts "
            "and convert the merged dataset");
  o.format = DatasetFormat::kWebDataset;
  o.force = true;
  EXPECT_EQ(PackTo(out(), o, &r).message(),
            "--force cannot be used with --partition: it would remove the other parts' files; remove OUT before the "
            "first part starts, or continue a part with --resume");
}

}  // namespace
}  // namespace shardpack
