#include "ops/pack/pack_partition.h"

#include <cctype>
#include <cstdio>

#include "ground/json_integer.h"
#include "ground/manifest_json.h"

namespace shardpack {
namespace {

class PartInput final : public PackInput {
 public:
  PartInput(PackInput* input, const PartPlan& plan) : input_(input), plan_(plan) {}
  const std::vector<std::string>& class_names() const override { return input_->class_names(); }
  std::vector<std::string> empty_classes() const override { return input_->empty_classes(); }
  std::vector<SkippedFile> initial_skips() const override {
    return plan_.part == 0 ? input_->initial_skips() : std::vector<SkippedFile>();
  }
  uint64_t expected() const override { return plan_.end - plan_.begin; }
  Status Next(PackItem* item, bool* done) override {
    // The items before the part's are read and dropped (a file input only names them).
    for (; position_ < plan_.begin; ++position_) {
      SHARDPACK_RETURN_IF_ERROR(input_->Next(item, done));
      if (*done) return Status::DataLoss("the input ended before this part's first item");
    }
    *done = position_ >= plan_.end;
    if (*done) return Status::OK();
    ++position_;
    return input_->Next(item, done);
  }
  Status Load(PackItem* item) const override { return input_->Load(item); }

 private:
  PackInput* const input_;
  const PartPlan plan_;
  uint64_t position_ = 0;  // in the whole input
};

// A whole number in 0..2^31-1 that is all of `text`.
bool ParseCount(const char* text, uint32_t* value) {
  if (text == nullptr || *text == '\0') return false;
  uint64_t v = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || (v = v * 10 + uint64_t(*c - '0')) > 0x7FFFFFFF) return false;
  }
  *value = uint32_t(v);
  return true;
}

}  // namespace

Status ResolvePartition(const std::string& spec, uint32_t partitions,
                        const std::function<const char*(const char*)>& variable_of, uint32_t* part, uint32_t* parts) {
  const auto variable = [&](const char* name, uint32_t* value) {
    if (ParseCount(variable_of(name), value)) return Status::OK();
    const char* v = variable_of(name);
    return Status::InvalidArgument(
        "--partition " + spec + " needs $" + name +
        (v ? " to be a number, not '" + std::string(v) + "'" : std::string(", which is not set")) +
        (spec == "slurm" ? " (run it as a task of a job array: sbatch --array)" : " (run it in an Indexed Job)"));
  };
  if (spec == "slurm" && partitions > 0) {
    // The array's task ids are the part numbers: a single task resubmitted (--array=I) is part I.
    SHARDPACK_RETURN_IF_ERROR(variable("SLURM_ARRAY_TASK_ID", part));
    *parts = partitions;
  } else if (spec == "slurm") {
    uint32_t id = 0, min = 0;
    SHARDPACK_RETURN_IF_ERROR(variable("SLURM_ARRAY_TASK_ID", &id));
    SHARDPACK_RETURN_IF_ERROR(variable("SLURM_ARRAY_TASK_COUNT", parts));
    if (variable_of("SLURM_ARRAY_TASK_MIN") != nullptr)
      SHARDPACK_RETURN_IF_ERROR(variable("SLURM_ARRAY_TASK_MIN", &min));
    if (id < min) return Status::InvalidArgument("$SLURM_ARRAY_TASK_ID is below $SLURM_ARRAY_TASK_MIN");
    *part = id - min;
  } else if (spec == "k8s") {
    SHARDPACK_RETURN_IF_ERROR(variable("JOB_COMPLETION_INDEX", part));
    if (partitions == 0) return Status::InvalidArgument("--partition k8s needs --partitions N (the Job's completions)");
    *parts = partitions;
  } else {
    const size_t slash = spec.find('/');
    if (slash == std::string::npos || !ParseCount(spec.substr(0, slash).c_str(), part) ||
        !ParseCount(spec.substr(slash + 1).c_str(), parts)) {
      return Status::InvalidArgument("--partition takes I/N (part I of N, from 0), slurm or k8s, not '" + spec + "'");
    }
  }
  if (*parts == 0 || *part >= *parts) {
    return Status::InvalidArgument("--partition " + spec + ": part " + std::to_string(*part) + " of " +
                                   std::to_string(*parts) + " does not exist (parts are numbered from 0)");
  }
  return Status::OK();
}

Status PlanPart(uint64_t inputs, uint64_t samples_per_shard, uint32_t part, uint32_t parts, PartPlan* plan,
                bool by_count, const std::string& prefix) {
  if (parts == 0 || part >= parts) {
    return Status::InvalidArgument("--partition " + std::to_string(part) + "/" + std::to_string(parts) +
                                   ": the part must lie in 0.." + std::to_string(parts == 0 ? 0 : parts - 1));
  }
  *plan = PartPlan();
  plan->part = part;
  plan->parts = parts;
  plan->inputs = inputs;
  plan->by_count = by_count;
  plan->name = PartName(part, parts);
  char name[64];
  if (!by_count) {
    plan->begin = inputs * part / parts;
    plan->end = inputs * (uint64_t(part) + 1) / parts;
    plan->first_shard = 0;
    plan->end_shard = UINT64_MAX;
    std::snprintf(name, sizeof(name), "-p%05u", part);
    plan->shard_prefix = prefix + name;
    return Status::OK();
  }
  const uint64_t s = samples_per_shard, blocks = (inputs + s - 1) / s;
  plan->first_shard = blocks * part / parts;
  plan->end_shard = blocks * (uint64_t(part) + 1) / parts;
  plan->begin = std::min(inputs, plan->first_shard * s);
  plan->end = std::min(inputs, plan->end_shard * s);
  return Status::OK();
}

Status PlanWriterPart(uint32_t part, uint32_t parts, const std::string& prefix, PartPlan* plan) {
  // A part cut by size of an input of unknown size (none: it covers [0, 0)), named as a writer's.
  SHARDPACK_RETURN_IF_ERROR(PlanPart(0, 1, part, parts, plan, /*by_count=*/false, prefix));
  plan->writer = true;
  plan->name = PartName(part, parts, /*writer=*/true);
  char name[32];
  std::snprintf(name, sizeof(name), "w%05u", part);
  plan->shard_prefix = prefix + "-" + name;
  plan->key_prefix = std::string(name) + "-";
  return Status::OK();
}

std::unique_ptr<PackInput> NewPartInput(PackInput* input, const PartPlan& plan) {
  return std::make_unique<PartInput>(input, plan);
}

bool IsPartShardFile(const std::string& name, const std::string& prefix, const PartPlan& plan) {
  const std::string& own = plan.by_count ? prefix : plan.shard_prefix;
  if (name.rfind(own + "-", 0) != 0) return false;
  size_t i = own.size() + 1, digits = 0;
  uint64_t number = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && digits < 19; ++i, ++digits) {
    number = number * 10 + uint64_t(name[i] - '0');
  }
  return digits >= 6 && i < name.size() && name[i] == '.' && number >= plan.first_shard && number < plan.end_shard;
}

Status WritePartManifest(Env* env, const std::string& out, const PartPlan& plan, const Manifest& manifest,
                         const nlohmann::json& source) {
  nlohmann::json j = ManifestToJson(manifest);
  j["part"] = {{"index", plan.part},
               {"count", plan.parts},
               {"inputs", plan.inputs},
               {"begin", plan.begin},
               {"end", plan.end},
               {"first_shard", plan.first_shard},
               {"end_shard", plan.end_shard},
               {"by_count", plan.by_count},
               {"shard_prefix", plan.shard_prefix},
               {"source", source}};
  if (plan.writer) j["part"]["writer"] = true;
  return WriteFileAtomically(env, JoinPath(out, plan.manifest_file()), j.dump(1) + "\n");
}

Status ReadPartManifest(Env* env, const std::string& path, Manifest* manifest, PartPlan* plan, nlohmann::json* source) {
  std::string text;
  SHARDPACK_RETURN_IF_ERROR(env->ReadFile(path, uint64_t(1) << 30, &text));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto bad = [&](const std::string& why) { return Status::DataLoss(path + ": " + why); };
  if (j.is_discarded() || !j.is_object()) return bad("not valid JSON");
  Status s = ManifestFromJson(j, manifest);
  if (!s.ok()) return bad(s.message());
  const auto part = j.find("part");
  if (part == j.end() || !part->is_object()) return bad("no \"part\" object (not a part manifest)");
  for (const char* key : {"index", "count", "inputs", "begin", "end", "first_shard", "end_shard"}) {
    if (!part->contains(key) || !IsJsonIntegerIn((*part)[key], 0, UINT64_MAX)) {
      return bad(std::string("\"part\" has no valid \"") + key + "\"");
    }
  }
  SHARDPACK_RETURN_IF_ERROR(PlanPart((*part)["inputs"].get<uint64_t>(), 1, (*part)["index"].get<uint32_t>(),
                                     (*part)["count"].get<uint32_t>(), plan));
  plan->begin = (*part)["begin"].get<uint64_t>();
  plan->end = (*part)["end"].get<uint64_t>();
  plan->first_shard = (*part)["first_shard"].get<uint64_t>();
  plan->end_shard = (*part)["end_shard"].get<uint64_t>();
  const auto by_count = part->find("by_count");
  const auto shard_prefix = part->find("shard_prefix");
  if (by_count == part->end() || !by_count->is_boolean() || shard_prefix == part->end() || !shard_prefix->is_string()) {
    return bad("\"part\" has no valid \"by_count\" and \"shard_prefix\"");
  }
  plan->by_count = by_count->get<bool>();
  plan->shard_prefix = shard_prefix->get<std::string>();
  const auto writer = part->find("writer");
  if (writer != part->end() && !writer->is_boolean()) return bad("\"part\" has no valid \"writer\"");
  plan->writer = writer != part->end() && writer->get<bool>();
  plan->name = PartName(plan->part, plan->parts, plan->writer);
  if (plan->writer) {
    const size_t dash = plan->shard_prefix.rfind('-');
    plan->key_prefix = (dash == std::string::npos ? plan->shard_prefix : plan->shard_prefix.substr(dash + 1)) + "-";
  }
  *source = part->value("source", nlohmann::json());
  return Status::OK();
}

std::string PartName(uint32_t part, uint32_t parts, bool writer) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s-%05u-of-%05u", writer ? "writer" : "part", part, parts);
  return name;
}

bool ParsePartManifestName(const std::string& name, uint32_t* part, uint32_t* parts, bool* writer) {
  // part-<digits>-of-<digits>.json, each number as PartName writes it (its own spelling: no sign,
  // no leading '+', no spaces that sscanf would let through).
  const auto number = [&](size_t* at, uint32_t* value) {
    const size_t start = *at;
    uint64_t v = 0;
    while (*at < name.size() && std::isdigit(static_cast<unsigned char>(name[*at])) && *at - start < 10) {
      v = v * 10 + uint64_t(name[*at] - '0');
      ++*at;
    }
    if (*at - start < 5 || v > UINT32_MAX) return false;
    *value = uint32_t(v);
    return true;
  };
  const bool w = name.rfind("writer-", 0) == 0;
  size_t at = w ? 7 : 5;
  uint32_t a = 0, b = 0;
  if ((!w && name.rfind("part-", 0) != 0) || !number(&at, &a) || name.compare(at, 4, "-of-") != 0) return false;
  at += 4;
  if (!number(&at, &b) || name.substr(at) != ".json" || PartName(a, b, w) + ".json" != name) return false;
  *part = a;
  *parts = b;
  *writer = w;
  return true;
}

}  // namespace shardpack
