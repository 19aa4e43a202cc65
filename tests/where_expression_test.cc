// --where (ops/views/where_expression.h): `and` binding tighter than `or`, parentheses, the aspect
// column as shown, each against a truth table computed here by hand; and the refusals a new user
// met, each saying what is wrong.
#include "ops/views/where_expression.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shardpack {
namespace {

SampleRecord Record(uint32_t width, uint32_t height, ImageFormat format, uint8_t orientation = 1, int32_t label = 0) {
  SampleRecord r;
  r.width = width;
  r.height = height;
  r.format = format;
  r.orientation = orientation;
  r.label = label;
  r.size = 1000;
  return r;
}

std::vector<bool> Holds(const std::string& text, const std::vector<SampleRecord>& records) {
  std::unique_ptr<WhereExpression> e;
  const Status s = WhereExpression::Parse(text, &e);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<bool> got;
  for (const SampleRecord& r : records) got.push_back(e != nullptr && e->Holds(r));
  return got;
}

TEST(WhereExpression, AndBindsTighterThanOrAndParenthesesGroup) {
  const std::vector<SampleRecord> r = {Record(600, 100, ImageFormat::kJpeg), Record(100, 600, ImageFormat::kPng),
                                       Record(100, 100, ImageFormat::kJpeg), Record(600, 600, ImageFormat::kPng)};
  // width >= 512 or (height >= 512 and format == jpeg): rows 0 and 3 by width; row 1 is a PNG.
  EXPECT_EQ(Holds("width >= 512 or height >= 512 and format == jpeg", r),
            (std::vector<bool>{true, false, false, true}));
  // (width >= 512 or height >= 512) and format == jpeg: only row 0.
  EXPECT_EQ(Holds("(width >= 512 or height >= 512) and format == jpeg", r),
            (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(Holds("((width<200))or(format!=jpeg)", r), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(Holds("label = 0 and label != -1", r), (std::vector<bool>{true, true, true, true}));
}

TEST(WhereExpression, AspectIsWidthOverHeightAsShown) {
  // 600x300 stored, 2.0; the same turned a quarter by EXIF (orientation 6): shown 300x600, 0.5.
  const std::vector<SampleRecord> r = {Record(600, 300, ImageFormat::kJpeg, 1), Record(600, 300, ImageFormat::kJpeg, 6),
                                       Record(400, 300, ImageFormat::kJpeg, 1), Record(10, 0, ImageFormat::kJpeg, 1)};
  EXPECT_EQ(Holds("aspect >= 1.5", r), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(Holds("aspect < 1", r), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(Holds("aspect > 1.3 and aspect < 1.34", r), (std::vector<bool>{false, false, true, false}));
}

TEST(WhereExpression, RefusalsSayWhatIsWrong) {
  const auto message = [](const std::string& text) {
    std::unique_ptr<WhereExpression> e;
    const std::string m = WhereExpression::Parse(text, &e).message();
    return m.substr(0, m.find(" (--where takes"));
  };
  EXPECT_EQ(message("format == JPEG"), "--where 'format == JPEG': formats are written in lower case: format == jpeg");
  EXPECT_EQ(message("Width > 3"),
            "--where 'Width > 3': 'Width' is not a column of the sample table (columns are "
            "lower case: width)");
  EXPECT_EQ(message("depth > 3"), "--where 'depth > 3': 'depth' is not a column of the sample table");
  EXPECT_EQ(message("width >= 25.5"), "--where 'width >= 25.5': width takes an integer, not 25.5");
  EXPECT_EQ(message("aspect > wide"),
            "--where 'aspect > wide': aspect takes a number (width over height, e.g. 1.5), "
            "not wide");
  EXPECT_EQ(message("(width > 3"), "--where '(width > 3': a '(' without its ')'");
  EXPECT_EQ(message("width > 3)"), "--where 'width > 3)': a ')' without its '('");
  EXPECT_EQ(message("width > 3 height > 3"),
            "--where 'width > 3 height > 3': 'height' after a whole expression: join terms with and, or");
  EXPECT_EQ(message("width > 3 and"), "--where 'width > 3 and': it ends where a term should follow");
  EXPECT_EQ(message(""), "--where '': it is empty");
  EXPECT_EQ(message("format < png"), "--where 'format < png': format takes == or !=, not <");
  EXPECT_EQ(message("width ~ 3"), "--where: '~' cannot appear in 'width ~ 3'");
}

}  // namespace
}  // namespace shardpack
