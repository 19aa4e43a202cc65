#include "ops/source_scan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/temp_dir.h"

namespace shardpack {
namespace {

using testing::TempDir;
using testing::WriteFile;

TEST(ScanSourceTree, ClassFoldersInSortedOrderGiveLabels) {
  TempDir d;
  WriteFile(d.Sub("zebra/1.jpg"), "x");
  WriteFile(d.Sub("ant/2.jpg"), "x");
  WriteFile(d.Sub("ant/sub/3.jpg"), "x");
  WriteFile(d.Sub("Moose/4.jpg"), "x");
  SourceTree t;
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), &t).ok());
  EXPECT_EQ(t.class_names, (std::vector<std::string>{"Moose", "ant", "zebra"}));
  ASSERT_EQ(t.files.size(), 4u);
  EXPECT_EQ(t.files[0].relpath, "Moose/4.jpg");
  EXPECT_EQ(t.files[0].label, 0);
  EXPECT_EQ(t.files[1].relpath, "ant/2.jpg");
  EXPECT_EQ(t.files[2].relpath, "ant/sub/3.jpg");
  EXPECT_EQ(t.files[2].label, 1);
  EXPECT_EQ(t.files[3].label, 2);
  EXPECT_TRUE(t.skipped.empty());
}

TEST(ScanSourceTree, NoClassFoldersMeansUnlabelled) {
  TempDir d;
  WriteFile(d.Sub("b.png"), "x");
  WriteFile(d.Sub("a.jpg"), "x");
  SourceTree t;
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), &t).ok());
  EXPECT_TRUE(t.class_names.empty());
  ASSERT_EQ(t.files.size(), 2u);
  EXPECT_EQ(t.files[0].relpath, "a.jpg");
  EXPECT_EQ(t.files[0].label, -1);
}

TEST(ScanSourceTree, LooseFileNextToClassFoldersIsSkipped) {
  TempDir d;
  WriteFile(d.Sub("cat/1.jpg"), "x");
  WriteFile(d.Sub("stray.jpg"), "x");
  SourceTree t;
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), &t).ok());
  ASSERT_EQ(t.skipped.size(), 1u);
  EXPECT_EQ(t.skipped[0].path, "stray.jpg");
  EXPECT_EQ(t.skipped[0].reason,
            "file lies directly in SRC, which has class folders, so it has no class; move it into a class folder");
}

TEST(ScanSourceTree, EmptyClassKeepsItsLabel) {
  TempDir d;
  WriteFile(d.Sub("a/1.jpg"), "x");
  std::filesystem::create_directories(d.Sub("b"));
  WriteFile(d.Sub("c/1.jpg"), "x");
  SourceTree t;
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), &t).ok());
  EXPECT_EQ(t.class_names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(t.empty_classes, (std::vector<std::string>{"b"}));
  EXPECT_EQ(t.files[1].label, 2);
}

TEST(ScanSourceTree, HiddenEntriesAreIgnored) {
  TempDir d;
  WriteFile(d.Sub("a/.DS_Store"), "x");
  WriteFile(d.Sub(".git/objects/x.jpg"), "x");
  WriteFile(d.Sub("a/1.jpg"), "x");
  SourceTree t;
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), &t).ok());
  EXPECT_EQ(t.class_names, (std::vector<std::string>{"a"}));
  ASSERT_EQ(t.files.size(), 1u);
  EXPECT_TRUE(t.skipped.empty());
}

TEST(ScanSourceTree, SymlinkLoopIsReportedNotFollowedForever) {
  TempDir d;
  WriteFile(d.Sub("a/1.jpg"), "x");
  ASSERT_EQ(::symlink("..", d.Sub("a/up").c_str()), 0);
  ASSERT_EQ(::symlink(".", d.Sub("a/self").c_str()), 0);
  SourceTree t;
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), &t).ok());
  ASSERT_EQ(t.files.size(), 1u);
  ASSERT_EQ(t.skipped.size(), 2u);
  EXPECT_EQ(t.skipped[0].path, "a/self");
  EXPECT_EQ(t.skipped[0].reason, "symlink loop: this folder is already being scanned; not entered again");
  EXPECT_EQ(t.skipped[1].path, "a/up");
}

TEST(ScanSourceTree, InvalidUtf8NameIsSkippedAndEscaped) {
  TempDir d;
  WriteFile(d.Sub("a/ok.jpg"), "x");
  WriteFile(d.Sub("a/bad\xff.jpg"), "x");
  SourceTree t;
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), &t).ok());
  ASSERT_EQ(t.files.size(), 1u);
  ASSERT_EQ(t.skipped.size(), 1u);
  EXPECT_EQ(t.skipped[0].path, "a/bad\\xFF.jpg");
  EXPECT_EQ(t.skipped[0].reason, "file name is not valid UTF-8; rename the file");
}

TEST(ScanSourceTree, MissingRootFails) {
  SourceTree t;
  Status s = ScanSourceTree(Env::Default(), "/nonexistent/shardpack", &t);
  EXPECT_EQ(s.message(), "cannot list /nonexistent/shardpack: No such file or directory");
}

TEST(Utf8, ValidatesAndEscapes) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("\xc3\xbc"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));  // a UTF-16 surrogate
  EXPECT_EQ(EscapeInvalidUtf8("a\xfe"
                              "b"),
            "a\\xFEb");
}

}  // namespace
}  // namespace shardpack
