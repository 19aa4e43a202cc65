// Faults injected through the Env seam (tests/support/fault_env.h): writes that run out of space,
// failing fsync and rename, reads that return corrupt or short data. Each time the right error
// surfaces, naming the file, and nothing partial is published: no manifest, no temporary file.
// Also: verify catches a flipped byte anywhere in any file of a dataset of every format.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>

#include "ground/manifest_json.h"
#include "shardpack/convert.h"
#include "shardpack/verify.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/fault_env.h"

namespace shardpack {
namespace {

namespace fs = std::filesystem;
using testing::FaultEnv;

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool HasTemporaryOrManifest(const std::string& dir) {
  for (const std::string& n : Names(dir)) {
    if (n == "manifest.json" || n.find(".tmp") != std::string::npos) return true;
  }
  return false;
}

class FaultInjectionTest : public testing::DatasetTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { MakeTree(3, 6); }

  PackOptions Options(Env* env) {
    PackOptions o = QuietOptions();
    o.format = testing::FormatNamed(GetParam());
    o.samples_per_shard = 5;
    if (o.format == DatasetFormat::kRaw) o.crop_height = o.crop_width = 16;
    o.env = env;
    return o;
  }
};

TEST_P(FaultInjectionTest, DiskFullAtAnyPointPublishesNothingAndResumeCompletesIt) {
  PackResult reference;
  ASSERT_TRUE(PackTo(out("reference"), Options(nullptr), &reference).ok());
  const std::string data_suffix = GetParam() == "lmdb" ? "" : ".tmp";
  if (GetParam() == "lmdb") GTEST_SKIP() << "LMDB writes through its map, outside the Env";
  for (uint64_t limit : {0, 100, 1500, 3000}) {
    SCOPED_TRACE("space for " + std::to_string(limit) + " bytes per file");
    const std::string dir = out("full" + std::to_string(limit));
    FaultEnv env;
    env.FailWritesOf(data_suffix, limit);
    PackResult r;
    const Status s = PackTo(dir, Options(&env), &r);
    ASSERT_EQ(s.code(), Status::Code::kIOError);
    EXPECT_NE(s.message().find("cannot write " + dir + "/"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(": No space left on device"), std::string::npos) << s.message();
    EXPECT_FALSE(HasTemporaryOrManifest(dir)) << s.message();
    PackOptions again = Options(nullptr);
    again.resume = true;
    ASSERT_TRUE(PackTo(dir, again, &r).ok());
    r.manifest.name = reference.manifest.name;  // the folder's name; everything else must agree
    EXPECT_EQ(ManifestToJson(r.manifest), ManifestToJson(reference.manifest));
    VerifyReport report;
    ASSERT_TRUE(Verify(dir, VerifyOptions(), &report).ok());
    EXPECT_TRUE(report.clean());
    EXPECT_EQ(report.samples, 18u);
  }
}

TEST_P(FaultInjectionTest, FailingSyncOrRenamePublishesNothing) {
  const std::string first = GetParam() == "wds"   ? "shard-000001.tar.tmp"
                            : GetParam() == "raw" ? "shard-000001.npy.tmp"
                                                  : "";
  struct Fault {
    std::string name;
    std::function<void(FaultEnv&)> inject;
    std::string message;
  };
  std::vector<Fault> faults = {
      {"manifest rename", [](FaultEnv& e) { e.FailRenameTo("manifest.json"); },
       "/manifest.json: Read-only file system"},
      {"manifest sync", [](FaultEnv& e) { e.FailSyncOf("manifest.json.tmp"); },
       "manifest.json.tmp: Input/output error"},
  };
  if (!first.empty()) {
    faults.push_back({"shard sync", [&](FaultEnv& e) { e.FailSyncOf(first); }, first + ": Input/output error"});
  }
  for (const Fault& f : faults) {
    SCOPED_TRACE(f.name);
    const std::string dir = out(f.name.substr(0, f.name.find(' ')) + std::to_string(f.name.size()));
    FaultEnv env;
    f.inject(env);
    PackOptions o = Options(&env);
    o.sync = true;  // the fsyncs happen only with sync
    PackResult r;
    const Status s = PackTo(dir, o, &r);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(f.message), std::string::npos) << s.message();
    EXPECT_FALSE(HasTemporaryOrManifest(dir)) << s.message();
  }
}

// Every file of the dataset, a byte flipped at ~25 places each: verify never passes, and a flip
// inside a sample's bytes of a shard names the shard and the sample.
TEST_P(FaultInjectionTest, VerifyCatchesAFlippedByteAnywhere) {
  PackResult packed;
  ASSERT_TRUE(PackTo(out(), Options(nullptr), &packed).ok());
  std::mt19937_64 rng(5);
  int flips = 0, pinned = 0;
  for (const std::string& name : Names(out())) {
    if (name == "lock.mdb") continue;  // LMDB's lock table: run-time state that LMDB rebuilds, not data
    const std::string path = out() + "/" + name;
    const std::string original = testing::ReadFile(path);
    for (int i = 0; i < 25; ++i) {
      const size_t at = rng() % original.size();
      std::string damaged = original;
      damaged[at] ^= 0x04;
      testing::WriteFile(path, damaged);
      VerifyReport report;
      const Status s = Verify(out(), VerifyOptions(), &report);
      // A damaged manifest may stop verify altogether; that is a report too, never a pass.
      EXPECT_FALSE(s.ok() && report.clean()) << name << " byte " << at;
      for (const VerifyProblem& p : report.problems) pinned += !p.key.empty() && p.shard == name;
      ++flips;
    }
    testing::WriteFile(path, original);
  }
  EXPECT_GE(flips, 25 * (GetParam() == "lmdb" ? 2 : 4));  // data.mdb and the manifest; shards and side files
  if (GetParam() != "lmdb") {
    EXPECT_GT(pinned, 20);  // LMDB is one file checked as a whole first
  }
  VerifyReport report;
  ASSERT_TRUE(Verify(out(), VerifyOptions(), &report).ok());
  EXPECT_TRUE(report.clean());
}

TEST_P(FaultInjectionTest, ShortReadsChangeNothingAndCorruptReadsAreCaught) {
  if (GetParam() != "wds") GTEST_SKIP() << "tar shards are the files read sequentially";
  PackResult packed;
  ASSERT_TRUE(PackTo(out(), Options(nullptr), &packed).ok());
  FaultEnv short_reads;
  short_reads.ShortReadsOf(".tar");
  VerifyOptions vo;
  vo.env = &short_reads;
  VerifyReport report;
  ASSERT_TRUE(Verify(out(), vo, &report).ok());
  EXPECT_TRUE(report.clean());
  PackOptions co = QuietOptions();
  co.env = &short_reads;
  co.format = DatasetFormat::kRaw;
  co.crop_height = co.crop_width = 16;
  PackResult converted;
  ASSERT_TRUE(Convert(out(), out("converted"), co, &converted).ok());
  EXPECT_EQ(converted.manifest.samples, 18u);
  FaultEnv corrupt;
  corrupt.CorruptReadsOf("shard-000002.tar");
  vo.env = &corrupt;
  ASSERT_TRUE(Verify(out(), vo, &report).ok());
  EXPECT_FALSE(report.clean());
  for (const VerifyProblem& p : report.problems) EXPECT_EQ(p.shard, "shard-000002.tar") << p.what;
}

INSTANTIATE_TEST_SUITE_P(Formats, FaultInjectionTest, ::testing::Values("wds", "raw", "lmdb"));

}  // namespace
}  // namespace shardpack
