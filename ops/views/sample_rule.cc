#include "ops/views/sample_rule.h"

#include <xxhash.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>

#include "ground/printable.h"
#include "ground/units.h"

namespace shardpack {
namespace {

constexpr const char* kColumns = "size, width, height, original_width, original_height, label, orientation, format";

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

}  // namespace

bool SampleRule::InFraction(const std::string& key, double fraction, uint64_t seed) {
  if (fraction >= 1) return true;
  if (fraction <= 0) return false;
  // fraction * 2^64 in long double (64 mantissa bits on x86-64), below 2^64 since fraction < 1.
  const auto threshold = static_cast<uint64_t>(std::floor(std::ldexp(static_cast<long double>(fraction), 64)));
  return XXH64(key.data(), key.size(), seed) < threshold;
}

Status SampleRule::ParseWhere(const std::string& where, std::vector<Term>* terms) {
  static const std::regex term_re(R"(^([a-z_]+)\s*(<=|>=|==|!=|<|>|=)\s*(-?[0-9]+|[a-z]+)$)");
  static const std::regex and_re(R"(\s+and\s+)");
  std::sregex_token_iterator it(where.begin(), where.end(), and_re, -1), end;
  for (; it != end; ++it) {
    const std::string text = Trim(*it);
    std::smatch m;
    const std::string help = " (--where takes terms COLUMN OP VALUE joined by 'and', COLUMN one of " +
                             std::string(kColumns) +
                             ", OP one of < <= > >= == !=, e.g. 'width >= 256 and format == jpeg')";
    if (!std::regex_match(text, m, term_re)) {
      return Status::InvalidArgument("--where: cannot read the term '" + text + "'" + help);
    }
    static const std::unordered_map<std::string, Term::Column> columns = {
        {"size", Term::Column::kSize},
        {"width", Term::Column::kWidth},
        {"height", Term::Column::kHeight},
        {"original_width", Term::Column::kOriginalWidth},
        {"original_height", Term::Column::kOriginalHeight},
        {"label", Term::Column::kLabel},
        {"orientation", Term::Column::kOrientation},
        {"format", Term::Column::kFormat}};
    static const std::unordered_map<std::string, Term::Op> ops = {
        {"<", Term::Op::kLess},          {"<=", Term::Op::kLessEqual}, {">", Term::Op::kGreater},
        {">=", Term::Op::kGreaterEqual}, {"==", Term::Op::kEqual},     {"=", Term::Op::kEqual},
        {"!=", Term::Op::kNotEqual}};
    Term t;
    const auto column = columns.find(m[1]);
    if (column == columns.end()) {
      return Status::InvalidArgument("--where: '" + m[1].str() + "' is not a column of the sample table" + help);
    }
    t.column = column->second;
    t.op = ops.at(m[2]);
    const std::string value = m[3];
    const bool number = value[0] == '-' || std::isdigit(static_cast<unsigned char>(value[0]));
    if (t.column == Term::Column::kFormat) {
      const ImageFormat f = ImageFormatFromExtension(value);
      if (number || f == ImageFormat::kUnknown || (t.op != Term::Op::kEqual && t.op != Term::Op::kNotEqual)) {
        return Status::InvalidArgument("--where: '" + text +
                                       "': format takes == or != and an image format (jpeg, png, webp, bmp)");
      }
      t.value = int64_t(f);
    } else {
      if (!number) return Status::InvalidArgument("--where: '" + text + "': " + m[1].str() + " takes an integer");
      try {
        t.value = std::stoll(value);
      } catch (const std::exception&) {
        return Status::InvalidArgument("--where: '" + text + "': the value is out of range");
      }
    }
    terms->push_back(t);
  }
  if (terms->empty()) return Status::InvalidArgument("--where is empty");
  return Status::OK();
}

bool SampleRule::Holds(const Term& t, const SampleRecord& r) {
  int64_t v = 0;
  switch (t.column) {
    case Term::Column::kSize:
      v = int64_t(r.size);
      break;
    case Term::Column::kWidth:
      v = r.width;
      break;
    case Term::Column::kHeight:
      v = r.height;
      break;
    case Term::Column::kOriginalWidth:
      v = r.original_width > 0 ? r.original_width : r.width;
      break;
    case Term::Column::kOriginalHeight:
      v = r.original_width > 0 ? r.original_height : r.height;
      break;
    case Term::Column::kLabel:
      v = r.label;
      break;
    case Term::Column::kOrientation:
      v = r.orientation;
      break;
    case Term::Column::kFormat:
      v = int64_t(r.format);
      break;
  }
  switch (t.op) {
    case Term::Op::kLess:
      return v < t.value;
    case Term::Op::kLessEqual:
      return v <= t.value;
    case Term::Op::kGreater:
      return v > t.value;
    case Term::Op::kGreaterEqual:
      return v >= t.value;
    case Term::Op::kEqual:
      return v == t.value;
    case Term::Op::kNotEqual:
      return v != t.value;
  }
  return false;
}

Status SampleRule::Make(const ViewRule& rule, const std::vector<std::string>& classes, Env* env,
                        std::unique_ptr<SampleRule>* out) {
  std::unique_ptr<SampleRule> r(new SampleRule());
  r->rule_ = rule;
  if (rule.classes.empty() && rule.keys_file.empty() && rule.where.empty() && !rule.fraction && !rule.count) {
    return Status::InvalidArgument(
        "no rule to choose samples by: give --classes, --keys, --where, --fraction or --count");
  }
  if (!rule.classes.empty()) {
    r->labels_.assign(classes.size(), false);
    for (const std::string& name : rule.classes) {
      size_t i = 0;
      while (i < classes.size() && classes[i] != name) ++i;
      if (i == classes.size()) {
        std::string all;
        for (const std::string& c : classes) all += (all.empty() ? "" : ", ") + c;
        return Status::InvalidArgument(
            "--classes: the dataset has no class '" + name + "'" +
            (classes.empty() ? std::string(" (it has no class names)") : " (its classes: " + all + ")"));
      }
      r->labels_[i] = true;
    }
  }
  if (!rule.keys_file.empty()) {
    std::string text;
    SHARDPACK_RETURN_IF_ERROR(env->ReadFile(rule.keys_file, uint64_t(1) << 36, &text).WithPrefix("--keys: "));
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string key = text.substr(start, end - start);
      if (!key.empty() && key.back() == '\r') key.pop_back();
      if (!key.empty() && r->keys_.emplace(key, r->key_list_.size()).second) r->key_list_.push_back(key);
      start = end + 1;
    }
    if (r->key_list_.empty()) return Status::InvalidArgument("--keys: " + rule.keys_file + " lists no key");
    r->key_found_.reset(new std::atomic<bool>[r->key_list_.size()]);
    for (size_t i = 0; i < r->key_list_.size(); ++i) r->key_found_[i] = false;
  }
  if (!rule.where.empty()) SHARDPACK_RETURN_IF_ERROR(ParseWhere(rule.where, &r->where_));
  if (rule.fraction && !(*rule.fraction >= 0 && *rule.fraction <= 1)) {
    return Status::InvalidArgument("--fraction is " + FormatNumber(*rule.fraction) + ": give a number from 0 to 1");
  }
  if (rule.count && rule.fraction) {
    return Status::InvalidArgument("--count and --fraction are two ways to say how many: give one");
  }
  if (rule.count && *rule.count == 0) return Status::InvalidArgument("--count is 0: give at least 1 sample");
  *out = std::move(r);
  return Status::OK();
}

uint64_t SampleRule::KeyHash(const std::string& key, uint64_t seed) { return XXH64(key.data(), key.size(), seed); }

bool SampleRule::Matches(const SampleRecord& record) const {
  if (!MatchesAllButCount(record)) return false;
  return !rule_.count || KeyHash(record.key, rule_.seed) < count_below_;
}

bool SampleRule::MatchesAllButCount(const SampleRecord& record) const {
  if (!labels_.empty() && !(record.label >= 0 && size_t(record.label) < labels_.size() && labels_[record.label])) {
    return false;
  }
  for (const Term& t : where_) {
    if (!Holds(t, record)) return false;
  }
  if (rule_.fraction && !InFraction(record.key, *rule_.fraction, rule_.seed)) return false;
  if (!keys_.empty()) {
    const auto it = keys_.find(record.key);
    if (it == keys_.end()) return false;
    key_found_[it->second].store(true, std::memory_order_relaxed);
  }
  return true;
}

Status SampleRule::CheckEveryKeyFound(const std::string& in_shown) const {
  size_t missing = 0, first = 0;
  for (size_t i = key_list_.size(); i-- > 0;) {
    if (!key_found_[i].load(std::memory_order_relaxed)) {
      ++missing;
      first = i;
    }
  }
  if (missing == 0) return Status::OK();
  return Status::InvalidArgument("--keys: " + std::to_string(missing) + " of the " + std::to_string(key_list_.size()) +
                                 " keys in " + rule_.keys_file + " are not samples of " + in_shown +
                                 " that meet the other rules, the first '" + Printable(key_list_[first]) +
                                 "': check that the list is of this dataset");
}

std::string SampleRule::ToJson() const {
  nlohmann::json j = nlohmann::json::object();
  if (!rule_.classes.empty()) j["classes"] = rule_.classes;
  if (!rule_.keys_file.empty()) j["keys"] = key_list_.size();
  if (!rule_.where.empty()) j["where"] = rule_.where;
  if (rule_.fraction) j["fraction"] = *rule_.fraction;
  if (rule_.count) j["count"] = *rule_.count;
  if (rule_.fraction || rule_.count) j["seed"] = rule_.seed;
  return j.dump();
}

}  // namespace shardpack
