#include "ops/source_list.h"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace shardpack {
namespace {

using testing::TempDir;
using testing::WriteFile;

TEST(ReadSourceList, IntegerLabelsAreUsedAsTheyAre) {
  TempDir d;
  WriteFile(d.Sub("val.txt"), "# ImageNet val\nval/b.JPEG\t7\r\n\nval/a.JPEG\t-1\n");
  SourceTree t;
  ASSERT_TRUE(ReadSourceList(Env::Default(), d.Sub("val.txt"), &t).ok());
  EXPECT_TRUE(t.class_names.empty());
  ASSERT_EQ(t.files.size(), 2u);
  EXPECT_EQ(t.files[0].relpath, "val/b.JPEG");  // list order, not sorted
  EXPECT_EQ(t.files[0].label, 7);
  EXPECT_EQ(t.files[1].label, -1);
}

TEST(ReadSourceList, ClassNamesMapThroughTheirSortedSet) {
  TempDir d;
  WriteFile(d.Sub("l.txt"), "x/1.jpg\tzebra\nx/2.jpg\tant\nx/3.jpg\tzebra\nx/4.jpg\t12\n");
  SourceTree t;
  ASSERT_TRUE(ReadSourceList(Env::Default(), d.Sub("l.txt"), &t).ok());
  EXPECT_EQ(t.class_names, (std::vector<std::string>{"12", "ant", "zebra"}));
  EXPECT_EQ(t.files[0].label, 2);
  EXPECT_EQ(t.files[1].label, 1);
  EXPECT_EQ(t.files[3].label, 0);
}

TEST(ReadSourceList, MalformedLinesNameFileAndLine) {
  TempDir d;
  SourceTree t;
  WriteFile(d.Sub("a.txt"), "ok.jpg\t1\nno-tab-here\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("a.txt"), &t).message(),
            d.Sub("a.txt") + " line 2: expected 'relative_path<TAB>label'");
  WriteFile(d.Sub("b.txt"), "../etc/passwd\t1\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("b.txt"), &t).message(),
            d.Sub("b.txt") + " line 1: path '../etc/passwd' must be relative, without '..'");
  WriteFile(d.Sub("c.txt"), "/abs.jpg\t1\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("c.txt"), &t).code(), Status::Code::kInvalidArgument);
  WriteFile(d.Sub("e.txt"), "x.jpg\t\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("e.txt"), &t).message(), d.Sub("e.txt") + " line 1: empty label");
}

}  // namespace
}  // namespace shardpack
