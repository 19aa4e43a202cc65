#include "ops/views/where_expression.h"

#include <cctype>
#include <cmath>
#include <unordered_map>

#include "ground/printable.h"
#include "shardpack/image.h"

namespace shardpack {
namespace {

constexpr const char* kHelp =
    " (--where takes terms COLUMN OP VALUE joined by 'and' and 'or', grouped by ( ), COLUMN one of size, width, "
    "height, original_width, original_height, label, orientation, format, aspect; OP one of < <= > >= == !=; "
    "e.g. '(width >= 512 or height >= 512) and format == jpeg')";

enum class Column { kSize, kWidth, kHeight, kOriginalWidth, kOriginalHeight, kLabel, kOrientation, kFormat, kAspect };
enum class Op { kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual };

// The text split into words, operators and parentheses.
Status Tokenize(const std::string& text, std::vector<std::string>* tokens) {
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '(' || c == ')') {
      tokens->push_back(std::string(1, c));
      ++i;
    } else if (c == '<' || c == '>' || c == '=' || c == '!') {
      const bool two = i + 1 < text.size() && text[i + 1] == '=';
      tokens->push_back(text.substr(i, two ? 2 : 1));
      i += two ? 2 : 1;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_' ||
                                 text[j] == '-' || text[j] == '.')) {
        ++j;
      }
      tokens->push_back(text.substr(i, j - i));
      i = j;
    } else {
      return Status::InvalidArgument("--where: '" + Printable(std::string(1, c)) + "' cannot appear in '" +
                                     Printable(text) + "'" + kHelp);
    }
  }
  return Status::OK();
}

}  // namespace

struct WhereExpression::Node {
  enum class Kind { kTerm, kAnd, kOr } kind = Kind::kTerm;
  std::vector<std::unique_ptr<Node>> children;  // kAnd, kOr
  Column column = Column::kSize;                // kTerm
  Op op = Op::kEqual;
  double number = 0;    // kAspect
  int64_t integer = 0;  // the other columns (kFormat: the ImageFormat)
};

namespace {

using Node = WhereExpression::Node;

class Parser {
 public:
  Parser(const std::string& text, std::vector<std::string> tokens) : text_(text), tokens_(std::move(tokens)) {}

  Status Parse(std::unique_ptr<Node>* root) {
    SHARDPACK_RETURN_IF_ERROR(Or(root));
    if (at_ < tokens_.size()) {
      return Fail(tokens_[at_] == ")" ? "a ')' without its '('"
                                      : "'" + tokens_[at_] + "' after a whole expression: join terms with and, or");
    }
    return Status::OK();
  }

 private:
  Status Fail(const std::string& what) const {
    return Status::InvalidArgument("--where '" + Printable(text_) + "': " + what + kHelp);
  }
  bool Next(const char* word) {
    if (at_ < tokens_.size() && tokens_[at_] == word) return ++at_, true;
    return false;
  }

  // Joins what `part` reads with `word` into one node of `kind`.
  Status Chain(const char* word, Node::Kind kind, Status (Parser::*part)(std::unique_ptr<Node>*),
               std::unique_ptr<Node>* out) {
    SHARDPACK_RETURN_IF_ERROR((this->*part)(out));
    while (Next(word)) {
      std::unique_ptr<Node> right;
      SHARDPACK_RETURN_IF_ERROR((this->*part)(&right));
      if ((*out)->kind != kind) {
        auto joined = std::make_unique<Node>();
        joined->kind = kind;
        joined->children.push_back(std::move(*out));
        *out = std::move(joined);
      }
      (*out)->children.push_back(std::move(right));
    }
    return Status::OK();
  }
  Status Or(std::unique_ptr<Node>* out) { return Chain("or", Node::Kind::kOr, &Parser::And, out); }
  Status And(std::unique_ptr<Node>* out) { return Chain("and", Node::Kind::kAnd, &Parser::Primary, out); }

  Status Primary(std::unique_ptr<Node>* out) {
    if (at_ >= tokens_.size()) return Fail(at_ == 0 ? "it is empty" : "it ends where a term should follow");
    if (Next("(")) {
      SHARDPACK_RETURN_IF_ERROR(Or(out));
      if (!Next(")")) return Fail("a '(' without its ')'");
      return Status::OK();
    }
    return Term(out);
  }

  Status Term(std::unique_ptr<Node>* out) {
    static const std::unordered_map<std::string, Column> columns = {{"size", Column::kSize},
                                                                    {"width", Column::kWidth},
                                                                    {"height", Column::kHeight},
                                                                    {"original_width", Column::kOriginalWidth},
                                                                    {"original_height", Column::kOriginalHeight},
                                                                    {"label", Column::kLabel},
                                                                    {"orientation", Column::kOrientation},
                                                                    {"format", Column::kFormat},
                                                                    {"aspect", Column::kAspect}};
    static const std::unordered_map<std::string, Op> ops = {
        {"<", Op::kLess},   {"<=", Op::kLessEqual}, {">", Op::kGreater},  {">=", Op::kGreaterEqual},
        {"==", Op::kEqual}, {"=", Op::kEqual},      {"!=", Op::kNotEqual}};
    if (at_ + 3 > tokens_.size()) return Fail("'" + tokens_[at_] + "' is not a whole term COLUMN OP VALUE");
    const std::string name = tokens_[at_], op = tokens_[at_ + 1], value = tokens_[at_ + 2];
    const auto column = columns.find(name);
    if (column == columns.end()) {
      std::string lower = name;
      for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
      return Fail("'" + name + "' is not a column of the sample table" +
                  (columns.count(lower) ? " (columns are lower case: " + lower + ")" : ""));
    }
    const auto o = ops.find(op);
    if (o == ops.end()) return Fail("'" + op + "' after " + name + " is not an operator");
    at_ += 3;
    auto node = std::make_unique<Node>();
    node->column = column->second;
    node->op = o->second;
    if (node->column == Column::kFormat) {
      std::string lower = value;
      for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
      const ImageFormat f = ImageFormatFromExtension(lower);
      if (f == ImageFormat::kUnknown) return Fail("format takes an image format (jpeg, png, webp, bmp), not " + value);
      if (lower != value) return Fail("formats are written in lower case: format " + op + " " + lower);
      if (node->op != Op::kEqual && node->op != Op::kNotEqual) return Fail("format takes == or !=, not " + op);
      node->integer = int64_t(f);
    } else if (node->column == Column::kAspect) {
      char* end = nullptr;
      node->number = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || !std::isfinite(node->number)) {
        return Fail("aspect takes a number (width over height, e.g. 1.5), not " + value);
      }
    } else {
      const bool digits = !value.empty() && value.find_first_not_of("-0123456789") == std::string::npos &&
                          value.find('-', 1) == std::string::npos && value != "-";
      if (!digits) return Fail(name + " takes an integer, not " + value);
      try {
        node->integer = std::stoll(value);
      } catch (const std::exception&) {
        return Fail(name + " " + op + " " + value + ": the value is out of range");
      }
    }
    *out = std::move(node);
    return Status::OK();
  }

  const std::string& text_;
  std::vector<std::string> tokens_;
  size_t at_ = 0;
};

template <typename T>
bool Compare(Op op, T a, T b) {
  switch (op) {
    case Op::kLess:
      return a < b;
    case Op::kLessEqual:
      return a <= b;
    case Op::kGreater:
      return a > b;
    case Op::kGreaterEqual:
      return a >= b;
    case Op::kEqual:
      return a == b;
    case Op::kNotEqual:
      return a != b;
  }
  return false;
}

bool Evaluate(const Node& n, const SampleRecord& r) {
  switch (n.kind) {
    case Node::Kind::kAnd:
      for (const auto& c : n.children) {
        if (!Evaluate(*c, r)) return false;
      }
      return true;
    case Node::Kind::kOr:
      for (const auto& c : n.children) {
        if (Evaluate(*c, r)) return true;
      }
      return false;
    case Node::Kind::kTerm:
      break;
  }
  int64_t v = 0;
  switch (n.column) {
    case Column::kAspect:  // an image without a height has no aspect: no comparison holds
      return r.shown_height() > 0 && Compare(n.op, double(r.shown_width()) / r.shown_height(), n.number);
    case Column::kSize:
      v = int64_t(r.size);
      break;
    case Column::kWidth:
      v = r.width;
      break;
    case Column::kHeight:
      v = r.height;
      break;
    case Column::kOriginalWidth:
      v = r.original_width > 0 ? r.original_width : r.width;
      break;
    case Column::kOriginalHeight:
      v = r.original_width > 0 ? r.original_height : r.height;
      break;
    case Column::kLabel:
      v = r.label;
      break;
    case Column::kOrientation:
      v = r.orientation;
      break;
    case Column::kFormat:
      v = int64_t(r.format);
      break;
  }
  return Compare(n.op, v, n.integer);
}

}  // namespace

WhereExpression::~WhereExpression() = default;

Status WhereExpression::Parse(const std::string& text, std::unique_ptr<WhereExpression>* out) {
  std::vector<std::string> tokens;
  SHARDPACK_RETURN_IF_ERROR(Tokenize(text, &tokens));
  std::unique_ptr<WhereExpression> e(new WhereExpression());
  SHARDPACK_RETURN_IF_ERROR(Parser(text, std::move(tokens)).Parse(&e->root_));
  *out = std::move(e);
  return Status::OK();
}

bool WhereExpression::Holds(const SampleRecord& record) const { return Evaluate(*root_, record); }

}  // namespace shardpack
