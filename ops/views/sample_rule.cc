#include "ops/views/sample_rule.h"

#include <xxhash.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "ground/printable.h"
#include "ground/units.h"

namespace shardpack {

bool SampleRule::InFraction(const std::string& key, double fraction, uint64_t seed) {
  if (fraction >= 1) return true;
  if (fraction <= 0) return false;
  // fraction * 2^64 in long double (64 mantissa bits on x86-64), below 2^64 since fraction < 1.
  const auto threshold = static_cast<uint64_t>(std::floor(std::ldexp(static_cast<long double>(fraction), 64)));
  return XXH64(key.data(), key.size(), seed) < threshold;
}

Status SampleRule::FractionBounds(const std::vector<double>& fractions, std::vector<uint64_t>* below) {
  below->assign(fractions.size(), 0);
  long double sum = 0;
  for (size_t i = 0; i < fractions.size(); ++i) {
    if (!(fractions[i] > 0 && fractions[i] < 1)) {
      return Status::InvalidArgument("--fractions: " + FormatNumber(fractions[i]) + " is not above 0 and below 1");
    }
    sum += fractions[i];
    (*below)[i] = sum >= 1 ? UINT64_MAX : static_cast<uint64_t>(std::floor(std::ldexp(sum, 64)));
  }
  if (std::fabs(double(sum) - 1) > 1e-9) {
    return Status::InvalidArgument("--fractions add up to " + FormatNumber(double(sum)) +
                                   ": give fractions that add up to 1 (e.g. 0.8,0.1,0.1)");
  }
  return Status::OK();
}

size_t SampleRule::FractionPart(const std::string& key, const std::vector<uint64_t>& below, uint64_t seed) {
  const uint64_t h = KeyHash(key, seed);
  for (size_t i = 0; i + 1 < below.size(); ++i) {
    if (h < below[i]) return i;
  }
  return below.size() - 1;
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
  if (!rule.where.empty()) SHARDPACK_RETURN_IF_ERROR(WhereExpression::Parse(rule.where, &r->where_));
  if (rule.fraction && !(*rule.fraction >= 0 && *rule.fraction <= 1)) {
    return Status::InvalidArgument("--fraction is " + FormatNumber(*rule.fraction) + ": give a number from 0 to 1");
  }
  if (rule.count && rule.fraction) {
    return Status::InvalidArgument("--count and --fraction are two ways to say how many: give one");
  }
  if (rule.count && *rule.count == 0) return Status::InvalidArgument("--count is 0: give at least 1 sample");
  if (rule.stratify && !rule.count && !rule.fraction) {
    return Status::InvalidArgument(
        "--stratify takes each class's share of what --fraction or --count gives: give one of them");
  }
  if (rule.stratify && classes.empty()) {
    return Status::InvalidArgument("--stratify: the dataset has no classes to stratify by");
  }
  r->class_count_ = classes.size();
  *out = std::move(r);
  return Status::OK();
}

uint64_t SampleRule::KeyHash(const std::string& key, uint64_t seed) { return XXH64(key.data(), key.size(), seed); }

bool SampleRule::Matches(const SampleRecord& record) const {
  if (!MatchesAllButCount(record)) return false;
  return !chooses_by_threshold() || KeyHash(record.key, rule_.seed) < below_[Stratum(record)];
}

size_t SampleRule::Stratum(const SampleRecord& record) const {
  if (!rule_.stratify) return 0;
  return record.label >= 0 && size_t(record.label) < class_count_ ? size_t(record.label) + 1 : 0;
}

bool SampleRule::MatchesAllButCount(const SampleRecord& record) const {
  if (!labels_.empty() && !(record.label >= 0 && size_t(record.label) < labels_.size() && labels_[record.label])) {
    return false;
  }
  if (where_ != nullptr && !where_->Holds(record)) return false;
  // A stratified fraction is a count a class (the thresholds), not a hash bound.
  if (rule_.fraction && !rule_.stratify && !InFraction(record.key, *rule_.fraction, rule_.seed)) return false;
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
  if (rule_.stratify) j["stratify"] = true;
  if (rule_.relabel) j["relabel"] = true;
  return j.dump();
}

}  // namespace shardpack
