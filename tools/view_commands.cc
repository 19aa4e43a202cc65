#include "tools/view_commands.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ground/printable.h"
#include "tools/environment.h"
#include "tools/progress_printer.h"
#include "tools/usage_error.h"

namespace shardpack {
namespace {

// What every view command takes besides its rule: its threads, and --json.
void AddThreadsAndJsonFlags(CLI::App* app, ViewFlags& f) {
  app->add_option("--threads", f.options.threads, "Sample tables read in parallel (0 = all cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app->add_flag("--json", f.json, "Print the result as JSON on stdout");
}

void AddRuleFlags(CLI::App* app, ViewFlags& f) {
  app->add_option("--classes", f.classes, "Samples of these classes (names, comma-separated)");
  app->add_option("--keys", f.options.rule.keys_file,
                  "Samples with these keys: a file, one key a line (each must be in the dataset)");
  app->add_option("--where", f.options.rule.where,
                  "A predicate over the sample table: 'COLUMN OP VALUE' terms joined by 'and' and 'or', grouped by "
                  "( ); columns size, width, height, original_width, original_height, label, orientation, format, "
                  "aspect (e.g. '(width >= 512 or height >= 512) and format == jpeg')");
  app->add_option("--fraction", f.fraction,
                  "Samples whose key hashes below this fraction (XXH64 of the key and --seed): the same samples "
                  "every time, and an append never moves one")
      ->check(CLI::Range(0.0, 1.0));
  app->add_option("--count", f.count,
                  "Exactly N samples (of those that meet the other rules): the N whose keys hash lowest (as "
                  "train_test_split(test_size=N)); an append may change some, where --fraction never does")
      ->check(CLI::Range(int64_t(1), INT64_MAX));
  app->add_flag("--stratify", f.options.rule.stratify,
                "With --fraction or --count: the same share of every class (as train_test_split's stratify), "
                "the count split over the classes by largest remainder; an append may change some");
  app->add_option("--seed", f.options.rule.seed, "The seed of --fraction's and --count's hash")->capture_default_str();
  AddThreadsAndJsonFlags(app, f);
  app->add_flag("--update", f.options.update,
                "The folders hold the views this command made already: bring them to IN's latest generation "
                "(the samples appended since that the rule takes join them; none moves), or make them when empty");
}

nlohmann::json ResultJson(const ViewResult& r) {
  nlohmann::json j = {{"out", r.out}, {"samples", r.samples}, {"shards", r.shards}, {"base_samples", r.base_samples}};
  if (!r.classes.empty()) j["classes"] = r.classes;
  if (r.updated) j["added"] = r.added;
  return j;
}

void PrintResult(const ViewResult& r) {
  if (r.updated) {
    std::printf("view %s: %llu of %llu samples, %llu of them added by the update\n", r.out.c_str(),
                static_cast<unsigned long long>(r.samples), static_cast<unsigned long long>(r.base_samples),
                static_cast<unsigned long long>(r.added));
    return;
  }
  std::printf("view %s: %llu of %llu samples, from %llu base shard%s\n", r.out.c_str(),
              static_cast<unsigned long long>(r.samples), static_cast<unsigned long long>(r.base_samples),
              static_cast<unsigned long long>(r.shards), r.shards == 1 ? "" : "s");
  for (size_t i = 0; i < r.classes.size(); ++i) std::printf("  label %zu: %s\n", i, Printable(r.classes[i]).c_str());
}

}  // namespace

CLI::App* AddSubsetCommand(CLI::App& app, ViewFlags& f) {
  CLI::App* c = app.add_subcommand(
      "subset",
      "Write a view of IN: the samples that meet every rule given, read as a dataset without a copy of any "
      "(docs/views.md).");
  c->add_option("IN", f.in, "Dataset folder or URL, or a view")->required();
  c->add_option("OUT", f.out, "The view's folder (new or empty)")->required();
  AddRuleFlags(c, f);
  c->add_flag("--relabel", f.options.rule.relabel,
              "With --classes: label the view's classes 0..N-1 in the dataset's order (the mapping is recorded "
              "in its manifest and printed), instead of keeping the dataset's labels and class list");
  return c;
}

CLI::App* AddSplitCommand(CLI::App& app, ViewFlags& f) {
  CLI::App* c =
      app.add_subcommand("split",
                         "Write two views of IN: OUT_A the samples that meet every rule given, OUT_B all the others "
                         "(e.g. --fraction 0.05 for a held-out set; docs/views.md).");
  c->add_option("IN", f.in, "Dataset folder or URL, or a view")->required();
  c->add_option("OUT_A", f.out, "The view of the samples that meet the rules (new or empty folder)")->required();
  c->add_option("OUT_B", f.out_b, "The view of the rest (new or empty folder)")->required();
  c->add_option("OUT_C", f.more_outs, "With --fractions: the third view's folder, and on");
  c->add_option("--fractions", f.fractions,
                "Split into as many views as fractions, by each key's hash: e.g. --fractions 0.8,0.1,0.1 train val "
                "test (they add up to 1; an append never moves a sample)");
  AddRuleFlags(c, f);
  return c;
}

CLI::App* AddRefreshCommand(CLI::App& app, ViewFlags& f) {
  CLI::App* c = app.add_subcommand(
      "refresh",
      "Bring views to their base's latest generation: the samples appended since that each view's rule takes "
      "join it, and none of its samples changes (docs/views.md).");
  c->add_option("VIEW", f.views, "View folders (made by subset or split)")->required();
  AddThreadsAndJsonFlags(c, f);
  return c;
}

int RunRefreshCommand(ViewFlags& f) {
  const Status env = ApplyEnvironment(&f.options.remote);
  if (!env.ok()) return Fail("refresh", env);
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& view : f.views) {
    ProgressPrinter progress(!f.json);
    f.options.on_shard = [&](uint64_t done, uint64_t total) { progress.UpdateShards("refresh", done, total); };
    RefreshResult r;
    const Status s = RefreshView(view, f.options, &r);
    progress.Finish();
    if (!s.ok()) return Fail("refresh", s);
    if (f.json) {
      all.push_back({{"view", r.view},
                     {"samples", r.samples},
                     {"appended", r.appended},
                     {"added", r.added},
                     {"generation", r.generation}});
    } else if (r.appended == 0) {
      std::printf("view %s: up to date (base generation %llu, %llu samples)\n", r.view.c_str(),
                  static_cast<unsigned long long>(r.generation), static_cast<unsigned long long>(r.samples));
    } else {
      std::printf("view %s: took %llu of the %llu samples appended to its base; %llu samples, base generation %llu\n",
                  r.view.c_str(), static_cast<unsigned long long>(r.added), static_cast<unsigned long long>(r.appended),
                  static_cast<unsigned long long>(r.samples), static_cast<unsigned long long>(r.generation));
    }
  }
  if (f.json) std::cout << all.dump(2) << "\n";
  return 0;
}

int RunViewCommand(ViewFlags& f, bool split) {
  const char* command = split ? "split" : "subset";
  const Status env = ApplyEnvironment(&f.options.remote);
  if (!env.ok()) return Fail(command, env);
  size_t start = 0;
  while (!f.classes.empty() && start <= f.classes.size()) {
    size_t end = f.classes.find(',', start);
    if (end == std::string::npos) end = f.classes.size();
    if (end > start) f.options.rule.classes.push_back(f.classes.substr(start, end - start));
    start = end + 1;
  }
  if (f.fraction >= 0) f.options.rule.fraction = f.fraction;
  if (f.count > 0) f.options.rule.count = uint64_t(f.count);
  if (!f.fractions.empty() || !f.more_outs.empty()) {
    std::vector<double> fractions;
    for (size_t at = 0; at <= f.fractions.size();) {
      size_t end = f.fractions.find(',', at);
      if (end == std::string::npos) end = f.fractions.size();
      const std::string item = f.fractions.substr(at, end - at);
      char* stop = nullptr;
      const double v = std::strtod(item.c_str(), &stop);
      if (item.empty() || stop == nullptr || *stop != '\0') {
        return Fail(command, Status::InvalidArgument("--fractions: '" + item +
                                                     "' is not a number (give e.g. --fractions 0.8,0.1,0.1)"));
      }
      fractions.push_back(v);
      at = end + 1;
    }
    if (f.fractions.empty()) {
      return Fail(command, Status::InvalidArgument("split writes two views (OUT_A OUT_B); more folders take "
                                                   "--fractions, one each (e.g. --fractions 0.8,0.1,0.1)"));
    }
    std::vector<std::string> outs = {f.out, f.out_b};
    outs.insert(outs.end(), f.more_outs.begin(), f.more_outs.end());
    ProgressPrinter progress(!f.json);
    f.options.on_shard = [&](uint64_t done, uint64_t total) { progress.UpdateShards(command, done, total); };
    std::vector<ViewResult> results;
    const Status s = SplitByFractions(f.in, outs, fractions, f.options, &results);
    progress.Finish();
    if (!s.ok()) return Fail(command, s);
    if (f.json) {
      nlohmann::json j = nlohmann::json::array();
      for (const ViewResult& r : results) j.push_back(ResultJson(r));
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    for (const ViewResult& r : results) PrintResult(r);
    return 0;
  }
  ProgressPrinter progress(!f.json);
  f.options.on_shard = [&](uint64_t done, uint64_t total) { progress.UpdateShards(command, done, total); };
  ViewResult a, b;
  const Status s = split ? Split(f.in, f.out, f.out_b, f.options, &a, &b) : Subset(f.in, f.out, f.options, &a);
  progress.Finish();
  if (!s.ok()) return Fail(command, s);
  if (f.json) {
    nlohmann::json j = split ? nlohmann::json{{"a", ResultJson(a)}, {"b", ResultJson(b)}} : ResultJson(a);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  PrintResult(a);
  if (split) PrintResult(b);
  return 0;
}

}  // namespace shardpack
