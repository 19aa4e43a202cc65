// Behaviour every output format shares: bad inputs are skipped and listed the same way, --list
// input works, verify comes out clean on what pack wrote.
#include <gtest/gtest.h>

#include "shardpack/pack.h"
#include "shardpack/stat.h"
#include "shardpack/verify.h"
#include "tests/support/dataset_fixture.h"
#include "tests/support/fault_env.h"

namespace shardpack {
namespace {

using testing::FaultEnv;
using testing::MakeImage;
using testing::WriteFile;

class EveryFormat : public testing::DatasetTest, public ::testing::WithParamInterface<std::string> {
 protected:
  PackOptions Options() {
    PackOptions o = QuietOptions();
    o.format = testing::FormatNamed(GetParam());
    if (o.format == DatasetFormat::kRaw) o.crop_height = o.crop_width = 16;
    return o;
  }
};

TEST_P(EveryFormat, BadInputsAreSkippedAndListedTheSameWay) {
  MakeTree(1, 3);
  const std::string jpeg = MakeImage(ImageFormat::kJpeg, 400, 300, 5);
  WriteFile(src() + "/c0/empty.jpg", "");
  WriteFile(src() + "/c0/truncated.jpg", jpeg.substr(0, jpeg.size() / 2));
  WriteFile(src() + "/c0/notes.txt", "not an image\n");
  WriteFile(src() + "/c0/corrupt.png", "\x89PNG\r\n\x1a\n garbage garbage garbage garbage");
  WriteFile(src() + "/c0/unreadable.jpg", jpeg);
  WriteFile(src() + "/c0/bad\xfe.jpg", jpeg);
  FaultEnv env;
  env.FailReadsOf("/c0/unreadable.jpg");
  PackOptions o = Options();
  o.env = &env;
  std::vector<std::string> reported;
  o.on_skip = [&](const SkippedFile& f) { reported.push_back(f.path); };
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  EXPECT_EQ(r.manifest.samples, 3u);
  EXPECT_EQ(reported.size(), 6u);
  std::map<std::string, std::string> reasons;
  for (const SkippedFile& f : r.manifest.skipped) reasons[f.path] = f.reason;
  EXPECT_EQ(reasons, (std::map<std::string, std::string>{
                         {"c0/bad\\xFE.jpg", "file name is not valid UTF-8; rename the file"},
                         {"c0/corrupt.png", "corrupt PNG: missing or malformed IHDR chunk"},
                         {"c0/empty.jpg", "empty file"},
                         {"c0/notes.txt", "not a supported image (JPEG, PNG, WebP, BMP)"},
                         {"c0/truncated.jpg", "truncated JPEG: no end-of-image marker after the image data"},
                         {"c0/unreadable.jpg", "cannot read " + src() + "/c0/unreadable.jpg: Input/output error"},
                     }));
  VerifyReport report;
  ASSERT_TRUE(Verify(out(), VerifyOptions(), &report).ok());
  EXPECT_TRUE(report.clean());
  EXPECT_EQ(report.samples, 3u);
}

TEST_P(EveryFormat, ListInputLabelsFilesAndReportsMissingOnes) {
  MakeTree(2, 2);
  WriteFile(dir_.Sub("list.txt"), "c1/img1.JPG\tdog\nc0/img0.JPG\tcat\nc0/missing.jpg\tcat\nc1/img0.JPG\tdog\n");
  PackOptions o = Options();
  o.list_file = dir_.Sub("list.txt");
  PackResult r;
  ASSERT_TRUE(PackTo(out(), o, &r).ok());
  EXPECT_EQ(r.manifest.samples, 3u);
  EXPECT_EQ(r.manifest.classes, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(r.manifest.skipped.size(), 1u);
  EXPECT_EQ(r.manifest.skipped[0].path, "c0/missing.jpg");
  EXPECT_EQ(r.manifest.skipped[0].reason, "cannot open " + src() + "/c0/missing.jpg: No such file or directory");
  DatasetStats st;
  ASSERT_TRUE(Stat(out(), {}, &st).ok());
  EXPECT_EQ(st.classes[0].samples, 1u);  // cat
  EXPECT_EQ(st.classes[1].samples, 2u);  // dog
}

INSTANTIATE_TEST_SUITE_P(Formats, EveryFormat, ::testing::Values("wds", "lmdb", "raw"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace shardpack
