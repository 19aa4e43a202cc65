#include "ops/pack/source_list.h"

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

// A table of samples: image, label and fields, as img2dataset's inputs look.
TEST(ReadSourceList, JsonLinesGiveImageLabelAndFields) {
  TempDir d;
  WriteFile(d.Sub("s.jsonl"),
            "{\"image\": \"a/1.jpg\", \"txt\": \"a dog \u00fc\", \"cls\": 3, \"json\": {\"box\": [1, 2]}}\n"
            "\n"
            "{\"path\": \"a/2.jpg\", \"txt\": \"\", \"json\": null, \"cls\": 0}\n");
  SourceTree t;
  ASSERT_TRUE(ReadSourceList(Env::Default(), d.Sub("s.jsonl"), &t).ok());
  ASSERT_EQ(t.files.size(), 2u);
  EXPECT_EQ(t.files[0].relpath, "a/1.jpg");
  EXPECT_EQ(t.files[0].label, 3);
  ASSERT_EQ(t.files[0].fields.size(), 2u);
  EXPECT_EQ(t.files[0].fields[0].name, "json");
  EXPECT_EQ(t.files[0].fields[0].value, "{\"box\":[1,2]}");  // a non-string value as its JSON text
  EXPECT_EQ(t.files[0].fields[0].relpath, "");
  EXPECT_EQ(t.files[0].fields[1].name, "txt");
  EXPECT_EQ(t.files[0].fields[1].value, "a dog \xc3\xbc");
  ASSERT_EQ(t.files[1].fields.size(), 1u);  // null: no json; "": an empty caption
  EXPECT_EQ(t.files[1].fields[0].value, "");
  EXPECT_EQ(t.files[1].label, 0);
}

TEST(ReadSourceList, CsvWithQuotesAndTsvWithAHeader) {
  TempDir d;
  WriteFile(d.Sub("s.csv"),
            "image,caption.txt,label\r\n"
            "b/1.jpg,\"a cat, sitting\",cat\r\n"
            "b/2.jpg,\"two\nlines, \"\"quoted\"\"\",dog\r\n"
            "b/3.jpg,,cat\r\n");
  SourceTree t;
  ASSERT_TRUE(ReadSourceList(Env::Default(), d.Sub("s.csv"), &t).ok());
  EXPECT_EQ(t.class_names, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(t.files.size(), 3u);
  EXPECT_EQ(t.files[0].fields[0].name, "caption.txt");
  EXPECT_EQ(t.files[0].fields[0].value, "a cat, sitting");
  EXPECT_EQ(t.files[1].fields[0].value, "two\nlines, \"quoted\"");
  EXPECT_EQ(t.files[1].label, 1);
  EXPECT_TRUE(t.files[2].fields.empty());  // an empty cell: no caption
  WriteFile(d.Sub("s.tsv"), "path\ttxt\nc/1.jpg\thello\n");
  ASSERT_TRUE(ReadSourceList(Env::Default(), d.Sub("s.tsv"), &t).ok());
  ASSERT_EQ(t.files.size(), 1u);
  EXPECT_EQ(t.files[0].label, -1);
  EXPECT_EQ(t.files[0].fields[0].value, "hello");
  WriteFile(d.Sub("old.tsv"), "c/1.jpg\t4\n");  // no header: the path<TAB>label form
  ASSERT_TRUE(ReadSourceList(Env::Default(), d.Sub("old.tsv"), &t).ok());
  EXPECT_EQ(t.files[0].label, 4);
}

TEST(ReadSourceList, BadTablesNameFileLineAndColumn) {
  TempDir d;
  SourceTree t;
  WriteFile(d.Sub("a.csv"), "image,txt\nx/1.jpg,ok\n,a caption without its image\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("a.csv"), &t).message(),
            d.Sub("a.csv") + " line 3: no image path in column 'image'");
  WriteFile(d.Sub("b.csv"), "image,txt\nx/1.jpg,ok,extra\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("b.csv"), &t).message(),
            d.Sub("b.csv") + " line 2: 3 columns, the header has 2");
  WriteFile(d.Sub("c.csv"), "image,txt\nx/1.jpg,\"never closed\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("c.csv"), &t).message(), d.Sub("c.csv") + " line 2: unclosed quote");
  WriteFile(d.Sub("d.jsonl"), "{\"image\": \"x.jpg\"}\n[1, 2]\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("d.jsonl"), &t).message(),
            d.Sub("d.jsonl") + " line 2: not a JSON object");
  WriteFile(d.Sub("e.jsonl"), "{\"image\": \"x.jpg\", \"my caption\": \"x\"}\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("e.jsonl"), &t).message(),
            d.Sub("e.jsonl") +
                ": column 'my caption' cannot be a field: field name 'my caption' has a character "
                "outside A-Z a-z 0-9 _ - .");
  WriteFile(d.Sub("f.jsonl"), "{\"txt\": \"no image\"}\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("f.jsonl"), &t).message(),
            d.Sub("f.jsonl") + " line 1: no image path (a column or key named image or path)");
  WriteFile(d.Sub("g.csv"), "image,png\nx.jpg,y\n");
  EXPECT_EQ(ReadSourceList(Env::Default(), d.Sub("g.csv"), &t).message(),
            d.Sub("g.csv") + ": column 'png' cannot be a field: 'png' would be a second image");
}

}  // namespace
}  // namespace shardpack
