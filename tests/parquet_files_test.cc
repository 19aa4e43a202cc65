// Which .parquet files a location names (formats/parquet/parquet_files.h; issue 62): the Hub's
// split names, folders walked, globs, splits refused, image trees left to pack. Built with and
// without Arrow's Parquet library. Reading the files is python/tests/test_parquet.py, against
// files `datasets` and pyarrow write.
#include "formats/parquet/parquet_files.h"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace shardpack {
namespace {

TEST(ParquetSplitOf, TakesTheHubsFileNames) {
  EXPECT_EQ(ParquetSplitOf("train-00000-of-00008.parquet"), "train");
  EXPECT_EQ(ParquetSplitOf("validation-00012-of-00100.parquet"), "validation");
  EXPECT_EQ(ParquetSplitOf("test-00003.parquet"), "test");
  EXPECT_EQ(ParquetSplitOf("train.parquet"), "");
  EXPECT_EQ(ParquetSplitOf("part-0.parquet"), "");                   // four digits short of the layout
  EXPECT_EQ(ParquetSplitOf("my-train-00000-of-00002.parquet"), "");  // a dash in the split
  EXPECT_EQ(ParquetSplitOf("00000-of-00002.parquet"), "");
  EXPECT_EQ(ParquetSplitOf("train-00000-of-00008.arrow"), "");
}

TEST(ListParquetFiles, WalksAFolderSortedSkippingHiddenOnes) {
  testing::TempDir dir;
  testing::WriteFile(dir.Sub("data/train-00001-of-00002.parquet"), "x");
  testing::WriteFile(dir.Sub("data/train-00000-of-00002.parquet"), "x");
  testing::WriteFile(dir.Sub(".cache/huggingface/train-00000-of-00002.parquet"), "x");
  testing::WriteFile(dir.Sub("README.md"), "# card");
  ParquetFiles files;
  ASSERT_TRUE(ListParquetFiles(Env::Default(), dir.path(), &files).ok());
  EXPECT_EQ(files.base, dir.path());
  EXPECT_EQ(files.names,
            (std::vector<std::string>{"data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet"}));
  EXPECT_EQ(files.split, "train");
  EXPECT_EQ(ParquetBaseOf(Env::Default(), dir.path()), dir.path());
}

TEST(ListParquetFiles, RefusesSeveralSplitsAndAGlobTakesOne) {
  testing::TempDir dir;
  testing::WriteFile(dir.Sub("data/train-00000-of-00002.parquet"), "x");
  testing::WriteFile(dir.Sub("data/train-00001-of-00002.parquet"), "x");
  testing::WriteFile(dir.Sub("data/test-00000-of-00001.parquet"), "x");
  ParquetFiles files;
  const Status s = ListParquetFiles(Env::Default(), dir.path(), &files);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), dir.path() +
                             " holds the splits test (1 files), train (2 files) of a Hugging Face dataset; "
                             "read one at a time, e.g. '" +
                             dir.path() + "/data/test-*.parquet'");
  ASSERT_TRUE(ListParquetFiles(Env::Default(), dir.Sub("data/train-*.parquet"), &files).ok());
  EXPECT_EQ(files.base, dir.Sub("data"));
  EXPECT_EQ(files.names, (std::vector<std::string>{"train-00000-of-00002.parquet", "train-00001-of-00002.parquet"}));
  EXPECT_EQ(ParquetBaseOf(Env::Default(), dir.Sub("data/train-*.parquet")), dir.Sub("data"));
  ASSERT_TRUE(ListParquetFiles(Env::Default(), dir.Sub("data/test-00000-of-00001.parquet"), &files).ok());
  EXPECT_EQ(files.names, std::vector<std::string>{"test-00000-of-00001.parquet"});
  EXPECT_EQ(files.split, "test");
  EXPECT_EQ(ListParquetFiles(Env::Default(), dir.Sub("data/val-*.parquet"), &files).message(),
            dir.Sub("data/val-*.parquet") + " matches no file");
}

TEST(ListParquetFiles, LeavesImageFoldersAndOtherFoldersAlone) {
  testing::TempDir dir;
  testing::WriteFile(dir.Sub("images/cat/1.JPG"), "x");
  testing::WriteFile(dir.Sub("images/metadata.parquet"), "x");
  testing::WriteFile(dir.Sub("mds/index.json"), "{}");
  ParquetFiles files;
  EXPECT_EQ(ListParquetFiles(Env::Default(), dir.Sub("images"), &files).code(), Status::Code::kNotFound);
  EXPECT_EQ(ListParquetFiles(Env::Default(), dir.Sub("mds"), &files).code(), Status::Code::kNotFound);
  EXPECT_EQ(ListParquetFiles(Env::Default(), dir.Sub("missing"), &files).code(), Status::Code::kNotFound);
  EXPECT_EQ(ListParquetFiles(Env::Default(), dir.Sub("images/metadata.parquet"), &files).code(),
            Status::Code::kOk);  // named itself, a file is read
}

}  // namespace
}  // namespace shardpack
