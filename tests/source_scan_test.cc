#include "ops/pack/source_scan.h"

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
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), SourceLayout::kImageNet, &t).ok());
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
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), SourceLayout::kImageNet, &t).ok());
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
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), SourceLayout::kImageNet, &t).ok());
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
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), SourceLayout::kImageNet, &t).ok());
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
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), SourceLayout::kImageNet, &t).ok());
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
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), SourceLayout::kImageNet, &t).ok());
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
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), SourceLayout::kImageNet, &t).ok());
  ASSERT_EQ(t.files.size(), 1u);
  ASSERT_EQ(t.skipped.size(), 1u);
  EXPECT_EQ(t.skipped[0].path, "a/bad\\xFF.jpg");
  EXPECT_EQ(t.skipped[0].reason, "file name is not valid UTF-8; rename the file");
}

TEST(ScanSourceTree, MissingRootFails) {
  SourceTree t;
  Status s = ScanSourceTree(Env::Default(), "/nonexistent/shardpack", SourceLayout::kImageNet, &t);
  EXPECT_EQ(s.message(), "cannot list /nonexistent/shardpack: No such file or directory");
}

// Files sharing an image's name up to the first dot join its sample as fields, named by the rest.
TEST(ScanSourceTree, SidecarsJoinTheirImageInTheImageNetLayout) {
  TempDir d;
  WriteFile(d.Sub("dog/0001.jpg"), "x");
  WriteFile(d.Sub("dog/0001.txt"), "x");
  WriteFile(d.Sub("dog/0001.seg.png"), "x");
  WriteFile(d.Sub("dog/0001.cls"), "x");        // the folder is the class
  WriteFile(d.Sub("dog/0001.meta.json"), "x");  // reserved
  WriteFile(d.Sub("dog/0001.a b"), "x");        // not a field name
  WriteFile(d.Sub("dog/0002.jpg"), "x");
  WriteFile(d.Sub("dog/0002.png"), "x");  // two images: two samples, as before fields
  WriteFile(d.Sub("dog/0003.txt"), "x");  // no image: a sample of its own (pack skips it: not an image)
  WriteFile(d.Sub("dog/00010.jpg"), "x");
  SourceTree t;
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), SourceLayout::kImageNet, &t).ok());
  ASSERT_EQ(t.files.size(), 5u);
  EXPECT_EQ(t.files[0].relpath, "dog/0001.jpg");
  ASSERT_EQ(t.files[0].fields.size(), 2u);
  EXPECT_EQ(t.files[0].fields[0].name, "seg.png");
  EXPECT_EQ(t.files[0].fields[0].relpath, "dog/0001.seg.png");
  EXPECT_EQ(t.files[0].fields[1].name, "txt");
  EXPECT_EQ(t.files[0].fields[1].relpath, "dog/0001.txt");
  EXPECT_EQ(t.files[1].relpath, "dog/00010.jpg");  // '.' sorts before '0'
  EXPECT_EQ(t.files[2].relpath, "dog/0002.jpg");
  EXPECT_TRUE(t.files[2].fields.empty());
  EXPECT_EQ(t.files[3].relpath, "dog/0002.png");
  EXPECT_EQ(t.files[4].relpath, "dog/0003.txt");
  ASSERT_EQ(t.skipped.size(), 3u);
  EXPECT_EQ(t.skipped[0].path, "dog/0001.a b");
  EXPECT_EQ(t.skipped[0].reason, "field name 'a b' has a character outside A-Z a-z 0-9 _ - .");
  EXPECT_EQ(t.skipped[1].path, "dog/0001.cls");
  EXPECT_EQ(t.skipped[1].reason, "the class comes from the folder; a .cls file beside an image is not packed");
  EXPECT_EQ(t.skipped[2].path, "dog/0001.meta.json");
  EXPECT_EQ(t.skipped[2].reason, "field name 'meta.json' is reserved for shardpack's metadata; rename the file");
}

TEST(ScanSourceTree, SamplesLayoutGroupsFilesInEveryFolderWithoutClasses) {
  TempDir d;
  WriteFile(d.Sub("a/0001.JPEG"), "x");
  WriteFile(d.Sub("a/0001.cls"), "x");
  WriteFile(d.Sub("a/0001.json"), "x");
  WriteFile(d.Sub("a/b/0001.png"), "x");
  WriteFile(d.Sub("a/b/0001.webp"), "x");  // a second image
  WriteFile(d.Sub("a/b/0002.txt"), "x");   // no image
  WriteFile(d.Sub("top.bmp"), "x");
  SourceTree t;
  ASSERT_TRUE(ScanSourceTree(Env::Default(), d.path(), SourceLayout::kSamples, &t).ok());
  EXPECT_TRUE(t.class_names.empty());
  ASSERT_EQ(t.files.size(), 3u);
  EXPECT_EQ(t.files[0].relpath, "a/0001.JPEG");
  EXPECT_EQ(t.files[0].label, -1);
  ASSERT_EQ(t.files[0].fields.size(), 2u);
  EXPECT_EQ(t.files[0].fields[0].name, "cls");
  EXPECT_EQ(t.files[0].fields[1].name, "json");
  EXPECT_EQ(t.files[1].relpath, "a/b/0001.png");
  EXPECT_TRUE(t.files[1].fields.empty());
  EXPECT_EQ(t.files[2].relpath, "top.bmp");
  ASSERT_EQ(t.skipped.size(), 2u);
  EXPECT_EQ(t.skipped[0].path, "a/b/0001.webp");
  EXPECT_EQ(t.skipped[0].reason,
            "a second image of sample 'a/b/0001'; a sample has one image (name a mask like "
            "0001.seg.png)");
  EXPECT_EQ(t.skipped[1].path, "a/b/0002.txt");
  EXPECT_EQ(t.skipped[1].reason, "sample 'a/b/0002' has no image (a .jpg, .jpeg, .png, .webp or .bmp file)");
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
