// --where: a predicate over a sample table's columns, e.g.
//   "(width >= 512 or height >= 512) and format == jpeg and aspect < 2"
// Terms COLUMN OP VALUE joined by `and` and `or` (`and` binds tighter), grouped by parentheses.
// Columns: size, width, height, original_width, original_height, label, orientation (integers),
// format (== or != an image format: jpeg, png, webp, bmp) and aspect (the image's width over its
// height as shown, EXIF orientation applied: a decimal number). OP: < <= > >= == (or =) !=.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ground/sample_table.h"
#include "shardpack/status.h"

namespace shardpack {

class WhereExpression {
 public:
  // InvalidArgument saying what is wrong and how it is written: a column that is not one (the
  // columns listed), a format in capitals, a decimal for an integer column, an unbalanced
  // parenthesis, a term that does not read.
  static Status Parse(const std::string& text, std::unique_ptr<WhereExpression>* out);
  ~WhereExpression();

  bool Holds(const SampleRecord& record) const;

  struct Node;

 private:
  WhereExpression() = default;
  std::unique_ptr<Node> root_;
};

}  // namespace shardpack
