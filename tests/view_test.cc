// Views (issue 42, docs/views.md): subset and split write a small folder that every reader reads as
// the base's selected samples, exactly; a split's sides are disjoint, together the base, and hold
// the samples an independent computation of the key hash (libxxhash, here) puts there; a split is
// stable under appends; a base that changed, and a damaged view, are refused.
#include "shardpack/view.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "shardpack/convert.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/loader.h"
#include "shardpack/pack.h"
#include "shardpack/stat.h"
#include "shardpack/verify.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

namespace fs = std::filesystem;

struct Sample {
  std::string key;
  int32_t label = -1;
  ImageFormat format = ImageFormat::kUnknown;
  std::string bytes;  // the image file's (wds, lmdb) or the pixels (raw)
  bool operator==(const Sample& o) const { return key == o.key && label == o.label && bytes == o.bytes; }
};

std::vector<Sample> ReadAll(const std::string& location) {
  std::unique_ptr<DatasetReader> reader;
  const Status s = DatasetReader::Open(location, nullptr, &reader);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<Sample> samples;
  if (reader == nullptr) return samples;
  for (uint64_t i = 0; i < reader->size(); ++i) {
    ReadSample r;
    EXPECT_TRUE(reader->Read(i, &r).ok()) << i;
    samples.push_back({r.key, r.label, r.format,
                       r.encoded.empty() ? std::string(r.pixels.rgb.begin(), r.pixels.rgb.end()) : r.encoded});
  }
  return samples;
}

std::vector<std::string> Keys(const std::vector<Sample>& samples) {
  std::vector<std::string> keys;
  for (const Sample& s : samples) keys.push_back(s.key);
  return keys;
}

// The reference for --fraction: XXH64 of the key seeded by the seed, against fraction * 2^64,
// computed with libxxhash directly.
bool InFraction(const std::string& key, double fraction, uint64_t seed) {
  return double(XXH64(key.data(), key.size(), seed)) < std::ldexp(fraction, 64);
}

class ViewTest : public testing::DatasetTest {
 protected:
  // `n` samples in 10 classes: hard links to 20 real images (pack reads each file; keys are the
  // index), so that 10,000 samples cost no encoding.
  void MakeLinkedTree(const std::string& root, int n, int first = 0) {
    std::vector<std::string> originals;
    for (int i = 0; i < 20; ++i) {
      const std::string path = dir_.Sub("originals") + "/img" + std::to_string(i) + (i % 5 == 4 ? ".png" : ".jpg");
      if (!fs::exists(path)) {
        testing::WriteFile(path, testing::MakeImage(i % 5 == 4 ? ImageFormat::kPng : ImageFormat::kJpeg, 16 + i,
                                                    12 + i % 3, uint64_t(i)));
      }
      originals.push_back(path);
    }
    for (int i = first; i < first + n; ++i) {
      const std::string folder = root + "/c" + std::to_string(i % 10);
      fs::create_directories(folder);
      char name[32];
      std::snprintf(name, sizeof(name), "/%06d", i);
      const std::string& original = originals[size_t(i) % originals.size()];
      fs::create_hard_link(original, folder + name + fs::path(original).extension().string());
    }
  }

  PackOptions Options(const std::string& format = "wds") {
    PackOptions o = QuietOptions();
    o.format = testing::FormatNamed(format);
    o.samples_per_shard = 100;
    if (format == "raw") o.crop_height = o.crop_width = 8;
    return o;
  }

  ViewOptions Fraction(double fraction, uint64_t seed) {
    ViewOptions o;
    o.rule.fraction = fraction;
    o.rule.seed = seed;
    o.threads = 2;
    return o;
  }
};

// 10,000 samples split at 0.05: 500 +- 60 on the first side, exactly the samples the reference
// hash puts there, in the base's order and with the base's bytes; the other side is the rest. Then
// other fractions and seeds: disjoint, and together the base, every time.
TEST_F(ViewTest, ASplitHoldsTheFractionAndItsSidesAreDisjointAndTogetherTheBase) {
  MakeLinkedTree(src(), 10000);
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(), &packed).ok());
  ASSERT_EQ(packed.manifest.samples, 10000u);
  const std::vector<Sample> base = ReadAll(out("ds"));
  for (const auto& [fraction, seed] : std::vector<std::pair<double, uint64_t>>{{0.05, 7}, {0.5, 0}, {0.01, 123}}) {
    SCOPED_TRACE(std::to_string(fraction) + " seed " + std::to_string(seed));
    const std::string a = out("a" + std::to_string(seed)), b = out("b" + std::to_string(seed));
    ViewResult ra, rb;
    const Status s = Split(out("ds"), a, b, Fraction(fraction, seed), &ra, &rb);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::vector<Sample> want_a, want_b;
    for (const Sample& x : base) (InFraction(x.key, fraction, seed) ? want_a : want_b).push_back(x);
    const std::vector<Sample> got_a = ReadAll(a), got_b = ReadAll(b);
    EXPECT_TRUE(got_a == want_a);
    EXPECT_TRUE(got_b == want_b);
    EXPECT_EQ(ra.samples, want_a.size());
    EXPECT_EQ(rb.samples, want_b.size());
    if (fraction == 0.05) {
      EXPECT_GE(got_a.size(), 440u);
      EXPECT_LE(got_a.size(), 560u);
    }
    std::set<std::string> ka, kb;
    for (const Sample& x : got_a) ka.insert(x.key);
    for (const Sample& x : got_b) kb.insert(x.key);
    for (const std::string& k : ka) EXPECT_EQ(kb.count(k), 0u) << k;
    EXPECT_EQ(ka.size() + kb.size(), base.size());
  }
}

// A split made again after an append puts every old sample on the side it was on, and the new
// ones where the hash says; the view made before the append keeps reading the base as it was (it
// was refused, and a job reading train/ died after a daily append), and says how many are newer.
TEST_F(ViewTest, ASplitIsStableUnderAnAppendAndAnOlderViewKeepsReadingItsSamples) {
  MakeLinkedTree(src(), 300);
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(), &packed).ok());
  ViewResult ra, rb;
  ASSERT_TRUE(Split(out("ds"), out("a"), out("b"), Fraction(0.2, 5), &ra, &rb).ok());
  const std::vector<Sample> before = ReadAll(out("a"));
  MakeLinkedTree(dir_.Sub("more"), 120, 300);
  PackResult appended;
  const Status s = Append(dir_.Sub("more"), out("ds"), Options(), &appended);
  ASSERT_TRUE(s.ok()) << s.ToString();

  std::unique_ptr<DatasetReader> reader;
  const Status opened = DatasetReader::Open(out("a"), nullptr, &reader);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  EXPECT_TRUE(ReadAll(out("a")) == before);
  for (const char* side : {"a", "b"}) {
    VerifyReport report;
    EXPECT_TRUE(Verify(out(side), VerifyOptions(), &report).ok() && report.clean()) << side;
    DatasetStats stats;
    ASSERT_TRUE(Stat(out(side), StatOptions(), &stats).ok()) << side;
    EXPECT_EQ(stats.view_base_newer, 120u) << side;
  }
  DatasetStats stats;
  ASSERT_TRUE(Stat(out("a"), StatOptions(), &stats).ok());
  EXPECT_EQ(stats.samples, before.size());
  // A base changed in another way than by appends (a shard it had, rewritten) is still refused.
  {
    const std::string kept = testing::ReadFile(out("ds") + "/manifest.json");
    Manifest m;
    ASSERT_TRUE(ReadManifest(Env::Default(), out("ds"), &m).ok());
    m.shards[0].xxh64 = "0123456789abcdef";
    ASSERT_TRUE(WriteManifest(Env::Default(), out("ds"), m).ok());
    const Status refused = DatasetReader::Open(out("a"), nullptr, &reader);
    EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(refused.message().find(" has changed since (shardpack append added to it)"), std::string::npos)
        << refused.message();
    testing::WriteFile(out("ds") + "/manifest.json", kept);
  }

  ASSERT_TRUE(Split(out("ds"), out("a2"), out("b2"), Fraction(0.2, 5), &ra, &rb).ok());
  const std::vector<Sample> after = ReadAll(out("a2"));
  const std::vector<Sample> all = ReadAll(out("ds"));
  ASSERT_EQ(all.size(), 420u);
  std::vector<Sample> old_part(after.begin(), after.begin() + std::min(after.size(), before.size()));
  EXPECT_TRUE(old_part == before);
  std::vector<Sample> want;
  for (const Sample& x : all) {
    if (InFraction(x.key, 0.2, 5)) want.push_back(x);
  }
  EXPECT_TRUE(after == want);
}

// refresh (and split --update) after an append: each view takes the appended samples its rule puts
// on its side (libxxhash for the fraction, the class by hand), and keeps every sample it had; a view
// of a view takes only those of its input's side; a --count view is refused with the command that
// makes it again; a second refresh has nothing to do.
TEST_F(ViewTest, RefreshTakesTheAppendedSamplesOfEachSideAndMovesNone) {
  MakeLinkedTree(src(), 300);
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(), &packed).ok());
  ViewResult ra, rb, r3;
  ASSERT_TRUE(Split(out("ds"), out("a"), out("b"), Fraction(0.2, 5), &ra, &rb).ok());
  ViewOptions c3;
  c3.rule.classes = {"c3"};
  ASSERT_TRUE(Subset(out("b"), out("b3"), c3, &r3).ok());
  std::vector<ViewResult> parts;
  ViewOptions seeded;
  seeded.rule.seed = 9;
  ASSERT_TRUE(SplitByFractions(out("ds"), {out("f1"), out("f2"), out("f3")}, {0.5, 0.3, 0.2}, seeded, &parts).ok());
  ViewOptions counted;
  counted.rule.count = 37;
  counted.rule.seed = 3;
  ASSERT_TRUE(Split(out("ds"), out("ca"), out("cb"), counted, &ra, &rb).ok());
  const std::vector<Sample> a_before = ReadAll(out("a")), b_before = ReadAll(out("b"));
  MakeLinkedTree(dir_.Sub("more"), 120, 300);
  PackResult appended;
  ASSERT_TRUE(Append(dir_.Sub("more"), out("ds"), Options(), &appended).ok());
  const std::vector<Sample> all = ReadAll(out("ds"));
  ASSERT_EQ(all.size(), 420u);

  std::vector<Sample> want_a, want_b, want_b3, want_f2;
  size_t new_in_a = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const Sample& x = all[i];
    const bool in_a = InFraction(x.key, 0.2, 5);
    (in_a ? want_a : want_b).push_back(x);
    if (in_a && i >= 300) ++new_in_a;
    if (!in_a && x.label == 3) want_b3.push_back(x);
    const double h = double(XXH64(x.key.data(), x.key.size(), 9));
    if (h >= std::ldexp(0.5, 64) && h < std::ldexp(0.8, 64)) want_f2.push_back(x);
  }
  RefreshResult refreshed;
  ASSERT_TRUE(RefreshView(out("a"), ViewOptions(), &refreshed).ok());
  EXPECT_EQ(refreshed.appended, 120u);
  EXPECT_EQ(refreshed.added, new_in_a);
  EXPECT_EQ(refreshed.samples, want_a.size());
  EXPECT_TRUE(ReadAll(out("a")) == want_a);
  EXPECT_TRUE(std::equal(a_before.begin(), a_before.end(), want_a.begin()));
  for (const char* view : {"b3", "f2"}) {
    const Status s = RefreshView(out(view), ViewOptions(), &refreshed);
    EXPECT_TRUE(s.ok()) << view << ": " << s.ToString();
  }
  EXPECT_TRUE(ReadAll(out("b3")) == want_b3);
  EXPECT_TRUE(ReadAll(out("f2")) == want_f2);
  for (const char* view : {"a", "b3"}) {
    VerifyReport report;
    EXPECT_TRUE(Verify(out(view), VerifyOptions(), &report).ok() && report.clean()) << view;
    DatasetStats stats;
    ASSERT_TRUE(Stat(out(view), StatOptions(), &stats).ok()) << view;
    EXPECT_EQ(stats.view_base_newer, 0u) << view;
  }
  // A second refresh: nothing appended since.
  ASSERT_TRUE(RefreshView(out("a"), ViewOptions(), &refreshed).ok());
  EXPECT_EQ(refreshed.appended, 0u);
  EXPECT_EQ(refreshed.samples, want_a.size());
  // The split's own command with --update: b (not refreshed yet) takes its side, a has nothing to do.
  ViewOptions update = Fraction(0.2, 5);
  update.update = true;
  ASSERT_TRUE(Split(out("ds"), out("a"), out("b"), update, &ra, &rb).ok());
  EXPECT_TRUE(rb.updated);
  EXPECT_EQ(rb.added, 120u - new_in_a);
  EXPECT_TRUE(ReadAll(out("b")) == want_b);
  EXPECT_TRUE(std::equal(b_before.begin(), b_before.end(), want_b.begin()));
  // ... and with another rule: refused, naming the command that made them.
  update.rule.fraction = 0.3;
  EXPECT_EQ(Split(out("ds"), out("a"), out("b"), update, &ra, &rb).message(),
            "--update: " + out("a") + " is a view made by another command: shardpack split " + out("ds") +
                " OUT_A OUT_B --fraction 0.2 --seed 5 (this view is OUT_A); --update takes the command that "
                "made it (or give a new folder)");
  // A count can change with an append: refused, with the command to make it again.
  EXPECT_EQ(RefreshView(out("ca"), ViewOptions(), &refreshed).message(),
            "view " + out("ca") + " cannot take the samples appended to " + out("ds") +
                ": it took --count samples, which an append can change; make it again into a new folder: "
                "shardpack split " +
                out("ds") + " OUT_A OUT_B --count 37 --seed 3 (this view is OUT_A)");
  EXPECT_EQ(Keys(ReadAll(out("ca"))).size(), 37u);  // untouched: it reads the base as it was
  EXPECT_EQ(RefreshView(out("ds"), ViewOptions(), &refreshed).message(),
            out("ds") +
                " is a dataset, not a view: refresh brings a view (shardpack subset or split) to its base's "
                "latest generation");
}

// Three ways by --fractions 0.8,0.1,0.1: every sample in exactly one view, the one its key's hash
// (libxxhash directly, over 2^64) falls in; the first equals a two-way split's --fraction 0.8.
TEST_F(ViewTest, FractionsSplitEverySampleIntoTheViewItsKeyHashesInto) {
  MakeLinkedTree(src(), 400);
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(), &packed).ok());
  ViewOptions o;
  o.rule.seed = 9;
  o.threads = 2;
  std::vector<ViewResult> results;
  const std::vector<std::string> outs = {out("train"), out("val"), out("test")};
  Status s = SplitByFractions(out("ds"), outs, {0.8, 0.1, 0.1}, o, &results);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::vector<Sample> all = ReadAll(out("ds"));
  std::vector<std::vector<std::string>> want(3);
  for (const Sample& x : all) {
    const double h = std::ldexp(double(XXH64(x.key.data(), x.key.size(), 9)), -64);
    want[h < 0.8 ? 0 : h < 0.9 ? 1 : 2].push_back(x.key);
  }
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(Keys(ReadAll(outs[i])), want[i]) << outs[i];
    EXPECT_EQ(results[i].samples, want[i].size());
    EXPECT_GT(want[i].size(), 10u);
  }
  ViewResult a, b;
  ASSERT_TRUE(Split(out("ds"), out("a"), out("b"), Fraction(0.8, 9), &a, &b).ok());
  EXPECT_EQ(Keys(ReadAll(out("a"))), want[0]);
  // Refused with the way out, nothing written.
  EXPECT_EQ(SplitByFractions(out("ds"), {out("x"), out("y")}, {0.8, 0.1}, o, &results).message(),
            "--fractions add up to 0.9: give fractions that add up to 1 (e.g. 0.8,0.1,0.1)");
  ViewOptions classes = o;
  classes.rule.classes = {"c0"};
  EXPECT_EQ(SplitByFractions(out("ds"), {out("x"), out("y")}, {0.5, 0.5}, classes, &results).message(),
            "--fractions splits every sample by its key's hash and takes no other rule: make a subset with the "
            "rules first, then split it");
  EXPECT_FALSE(fs::exists(out("x")));
}

// --count N: exactly the N samples (of those meeting the other rules) whose keys hash lowest,
// computed here with libxxhash; more than there are is refused naming how many there are.
TEST_F(ViewTest, CountTakesExactlyTheSamplesWhoseKeysHashLowest) {
  MakeLinkedTree(src(), 300);
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(), &packed).ok());
  const std::vector<Sample> all = ReadAll(out("ds"));
  const auto lowest = [&](size_t n, int32_t label) {
    std::vector<std::pair<uint64_t, std::string>> hashed;
    for (const Sample& x : all) {
      if (label < 0 || x.label == label) hashed.push_back({XXH64(x.key.data(), x.key.size(), 3), x.key});
    }
    std::sort(hashed.begin(), hashed.end());
    std::set<std::string> keys;
    for (size_t i = 0; i < n; ++i) keys.insert(hashed[i].second);
    std::vector<std::string> in_order;
    for (const Sample& x : all) {
      if (keys.count(x.key)) in_order.push_back(x.key);
    }
    return in_order;
  };
  ViewOptions o;
  o.rule.count = 37;
  o.rule.seed = 3;
  ViewResult a, b;
  ASSERT_TRUE(Split(out("ds"), out("val"), out("train"), o, &a, &b).ok());
  EXPECT_EQ(Keys(ReadAll(out("val"))), lowest(37, -1));
  EXPECT_EQ(a.samples, 37u);
  EXPECT_EQ(b.samples, 300u - 37);
  ViewOptions of_class = o;
  of_class.rule.classes = {"c1"};
  of_class.rule.count = 7;
  ViewResult c;
  ASSERT_TRUE(Subset(out("ds"), out("c1"), of_class, &c).ok());
  EXPECT_EQ(Keys(ReadAll(out("c1"))), lowest(7, 1));
  of_class.rule.count = 31;  // 30 samples of class c1
  EXPECT_EQ(Subset(out("ds"), out("c1-all"), of_class, &c).message(),
            "--count 31: only 30 samples of " + out("ds") + " meet the other rules; give at most 30");
  EXPECT_FALSE(fs::exists(out("c1-all")));
}

// --stratify: each class's share of the count, split by largest remainder, taken by the lowest key
// hashes within the class. 350 samples: c0 80, c1..c9 30 each; --count 40 is 40 * 80 / 350 = 9.14
// of c0 and 3.43 of each other class: floors 9 + 9 * 3 = 36, and the 4 left go to the largest
// remainders (0.43, the lower classes first on the tie): c1..c4 take 4, c5..c9 3 (worked by hand).
TEST_F(ViewTest, StratifyTakesEachClassItsShareOfTheCountByLowestHashes) {
  MakeLinkedTree(src(), 300);
  MakeLinkedTree(dir_.Sub("more"), 500, 300);  // then 50 more of c0 only
  for (const auto& e : fs::directory_iterator(dir_.Sub("more") + "/c0")) {
    if (fs::directory_entry(src() + "/c0/" + e.path().filename().string()).exists()) continue;
    fs::rename(e.path(), src() + "/c0/" + e.path().filename().string());
  }
  ASSERT_EQ(std::distance(fs::directory_iterator(src() + "/c0"), fs::directory_iterator()), 80);
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(), &packed).ok());
  const std::vector<Sample> all = ReadAll(out("ds"));
  ASSERT_EQ(all.size(), 350u);
  const std::vector<size_t> share = {9, 4, 4, 4, 4, 3, 3, 3, 3, 3};
  std::set<std::string> expected;
  for (int32_t label = 0; label < 10; ++label) {
    std::vector<std::pair<uint64_t, std::string>> hashed;
    for (const Sample& x : all) {
      if (x.label == label) hashed.push_back({XXH64(x.key.data(), x.key.size(), 5), x.key});
    }
    std::sort(hashed.begin(), hashed.end());
    for (size_t i = 0; i < share[size_t(label)]; ++i) expected.insert(hashed[i].second);
  }
  ViewOptions o;
  o.rule.count = 40;
  o.rule.seed = 5;
  o.rule.stratify = true;
  ViewResult a, b;
  ASSERT_TRUE(Split(out("ds"), out("val"), out("train"), o, &a, &b).ok());
  const std::vector<std::string> val = Keys(ReadAll(out("val")));
  EXPECT_EQ(std::set<std::string>(val.begin(), val.end()), expected);
  EXPECT_EQ(val.size(), 40u);
  EXPECT_EQ(b.samples, 310u);
  // A stratified fraction: 0.1 of 350 is 35, 8 of c0 and 3 of each other (exact).
  ViewOptions f;
  f.rule.fraction = 0.1;
  f.rule.seed = 5;
  f.rule.stratify = true;
  ViewResult c;
  ASSERT_TRUE(Subset(out("ds"), out("tenth"), f, &c).ok());
  std::map<int32_t, int> per_class;
  for (const Sample& x : ReadAll(out("tenth"))) ++per_class[x.label];
  EXPECT_EQ(per_class,
            (std::map<int32_t, int>{{0, 8}, {1, 3}, {2, 3}, {3, 3}, {4, 3}, {5, 3}, {6, 3}, {7, 3}, {8, 3}, {9, 3}}));
  ViewOptions alone;
  alone.rule.stratify = true;
  alone.rule.classes = {"c1"};
  EXPECT_EQ(Subset(out("ds"), out("x"), alone, &c).message(),
            "--stratify takes each class's share of what --fraction or --count gives: give one of them");
  EXPECT_FALSE(fs::exists(out("x")));
}

// --relabel: a subset of classes c7 and c2 is a 2-class dataset, c2 label 0 and c7 label 1 (the
// base's order), to every reader and to stat; a subset of it keeps that; a split refuses it.
TEST_F(ViewTest, RelabelGivesASubsetOfClassesDenseLabels) {
  MakeLinkedTree(src(), 100);
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(), &packed).ok());
  const std::vector<Sample> all = ReadAll(out("ds"));
  std::vector<Sample> expected;
  for (Sample x : all) {
    if (x.label != 2 && x.label != 7) continue;
    x.label = x.label == 2 ? 0 : 1;
    expected.push_back(x);
  }
  ASSERT_EQ(expected.size(), 20u);
  ViewOptions o;
  o.rule.classes = {"c7", "c2"};
  o.rule.relabel = true;
  ViewResult r;
  ASSERT_TRUE(Subset(out("ds"), out("two"), o, &r).ok());
  EXPECT_EQ(r.classes, (std::vector<std::string>{"c2", "c7"}));
  EXPECT_EQ(ReadAll(out("two")), expected);
  std::unique_ptr<DatasetReader> reader;
  ASSERT_TRUE(DatasetReader::Open(out("two"), nullptr, &reader).ok());
  EXPECT_EQ(reader->manifest().classes, (std::vector<std::string>{"c2", "c7"}));
  DatasetStats stats;
  ASSERT_TRUE(Stat(out("two"), StatOptions(), &stats).ok());
  ASSERT_EQ(stats.classes.size(), 2u);
  EXPECT_EQ(stats.classes[0].name, "c2");
  EXPECT_EQ(stats.classes[0].samples, 10u);
  EXPECT_EQ(stats.classes[1].name, "c7");
  EXPECT_EQ(stats.classes[1].samples, 10u);
  // A subset of it: its classes and labels, a --where on its labels.
  ViewOptions of_view;
  of_view.rule.where = "label == 1";
  ASSERT_TRUE(Subset(out("two"), out("c7"), of_view, &r).ok());
  std::vector<Sample> c7;
  for (const Sample& x : expected) {
    if (x.label == 1) c7.push_back(x);
  }
  EXPECT_EQ(ReadAll(out("c7")), c7);
  ASSERT_TRUE(DatasetReader::Open(out("c7"), nullptr, &reader).ok());
  EXPECT_EQ(reader->manifest().classes, (std::vector<std::string>{"c2", "c7"}));
  ViewResult a, b;
  EXPECT_EQ(Split(out("ds"), out("a"), out("b"), o, &a, &b).message(),
            "--relabel labels a subset's classes 0..N-1: give it to subset, with --classes (a split's other side "
            "would hold classes it does not list)");
  EXPECT_FALSE(fs::exists(out("a")));
}

class ViewFormatTest : public ViewTest, public ::testing::WithParamInterface<std::string> {};

// A subset by classes and a predicate, read by the dataset reader, the loader, stat, verify,
// convert and a mixture: each gives exactly the base's samples that meet the rule.
TEST_P(ViewFormatTest, EveryReaderReadsTheBasesSelectedSamples) {
  MakeTree(4, 12);  // classes c0..c3; widths 24..35, every fifth image a PNG
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(GetParam()), &packed).ok());
  ViewOptions o;
  o.rule.classes = {"c1", "c3"};
  o.rule.where = "label >= 0 and format == jpeg";
  ViewResult r;
  Status s = Subset(out("ds"), out("v"), o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();

  // The reference: the base's samples of labels 1 and 3 that are JPEGs (MakeTree makes every fifth
  // image of a class a PNG: 10 JPEGs of its 12).
  const std::vector<Sample> base = ReadAll(out("ds"));
  std::vector<Sample> want;
  for (const Sample& x : base) {
    if ((x.label == 1 || x.label == 3) && x.format == ImageFormat::kJpeg) want.push_back(x);
  }
  ASSERT_EQ(want.size(), 2u * 10u);
  EXPECT_EQ(r.samples, want.size());
  EXPECT_TRUE(ReadAll(out("v")) == want);

  // The loader: one epoch, every selected sample once.
  LoaderOptions lo;
  lo.sampler.batch_size = 4;
  lo.height = lo.width = 8;
  lo.threads = 2;
  std::unique_ptr<Loader> loader;
  s = Loader::Open(out("v"), lo, &loader);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  std::multiset<std::string> seen;
  std::multiset<int32_t> labels;
  for (const Batch* b = nullptr; loader->Next(&b).ok() && b != nullptr;) {
    seen.insert(b->keys.begin(), b->keys.end());
    labels.insert(b->labels.begin(), b->labels.end());
  }
  std::multiset<std::string> want_keys;
  std::multiset<int32_t> want_labels;
  for (const Sample& x : want) {
    want_keys.insert(x.key);
    want_labels.insert(x.label);
  }
  EXPECT_EQ(seen, want_keys);
  EXPECT_EQ(labels, want_labels);

  // stat: the view's count and classes.
  DatasetStats stats;
  ASSERT_TRUE(Stat(out("v"), StatOptions(), &stats).ok());
  EXPECT_EQ(stats.samples, 20u);
  EXPECT_EQ(stats.name, "v");
  EXPECT_EQ(stats.view_base, "../ds");
  EXPECT_EQ(stats.skipped, 0u);
  ASSERT_EQ(stats.classes.size(), 4u);
  EXPECT_EQ(stats.classes[0].samples, 0u);
  EXPECT_EQ(stats.classes[1].samples, 10u);
  EXPECT_EQ(stats.classes[3].samples, 10u);

  // verify: the view and its whole base.
  VerifyReport report;
  ASSERT_TRUE(Verify(out("v"), VerifyOptions(), &report).ok());
  EXPECT_TRUE(report.clean());
  EXPECT_EQ(report.view_samples, 20u);
  EXPECT_EQ(report.view_base, "../ds");
  EXPECT_EQ(report.samples, 48u);

  // convert: a standalone dataset of the same samples (raw writes raw again: its pixels as they are).
  if (GetParam() != "raw") {
    PackOptions co = QuietOptions();
    co.format = DatasetFormat::kWebDataset;
    PackResult converted;
    s = Convert(out("v"), out("standalone"), co, &converted);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(ReadAll(out("standalone")) == want);
  }

  // a mixture of the view and the base: the view's part holds only its samples.
  Mixture m;
  m.sources = {{out("v"), 1.0, 0, 1.0}, {out("ds"), 1.0, 0, 1.0}};
  s = Loader::Open(m, lo, &loader);
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = loader->StartEpoch(0);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::multiset<std::string> from_view;
  for (const Batch* b = nullptr; loader->Next(&b).ok() && b != nullptr;) {
    for (size_t i = 0; i < b->keys.size(); ++i) {
      if (b->indices[i] < 20) from_view.insert(b->keys[i]);
    }
  }
  EXPECT_EQ(from_view, want_keys);
}

INSTANTIATE_TEST_SUITE_P(Formats, ViewFormatTest, ::testing::Values("wds", "raw", "lmdb"));

// A view of a view names the first one's base, and takes from its selection only.
TEST_F(ViewTest, AViewOfAViewTakesFromItsSelection) {
  MakeTree(3, 10);
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(), &packed).ok());
  ViewOptions o;
  o.rule.classes = {"c2"};
  ViewResult r;
  ASSERT_TRUE(Subset(out("ds"), out("c2"), o, &r).ok());
  o.rule.classes.clear();
  o.rule.where = "format == png";
  ASSERT_TRUE(Subset(out("c2"), out("c2png"), o, &r).ok());
  std::vector<Sample> want;
  for (const Sample& x : ReadAll(out("ds"))) {
    if (x.label == 2 && x.bytes.compare(0, 4, "\x89PNG") == 0) want.push_back(x);
  }
  ASSERT_EQ(want.size(), 2u);
  EXPECT_TRUE(ReadAll(out("c2png")) == want);
  EXPECT_EQ(r.base_samples, 10u);
}

// Damage is refused: a base edited by hand, a view's manifest or selection file changed.
TEST_F(ViewTest, ATamperedBaseOrViewIsRefused) {
  MakeTree(2, 10);
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(), &packed).ok());
  ViewResult ra, rb;
  ASSERT_TRUE(Split(out("ds"), out("a"), out("b"), Fraction(0.5, 1), &ra, &rb).ok());
  ASSERT_GT(ra.samples, 0u);
  std::unique_ptr<DatasetReader> reader;

  // A selection file changed: its checksum no longer matches; read and verify say which.
  const std::string selection = out("a") + "/selection-000000.u32";
  std::string bytes = testing::ReadFile(selection);
  bytes[0] ^= 1;
  testing::WriteFile(selection, bytes);
  ASSERT_TRUE(DatasetReader::Open(out("a"), nullptr, &reader).ok());
  ReadSample sample;
  const Status damaged = reader->Read(0, &sample);
  EXPECT_EQ(damaged.code(), Status::Code::kDataLoss);
  EXPECT_NE(damaged.message().find("selection-000000.u32"), std::string::npos) << damaged.message();
  VerifyReport report;
  ASSERT_TRUE(Verify(out("a"), VerifyOptions(), &report).ok());
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_EQ(report.problems[0].shard, "selection-000000.u32");

  // The view's manifest edited: refused on open.
  std::string manifest = testing::ReadFile(out("b") + "/manifest.json");
  manifest.replace(manifest.find("\"seed\": 1"), 9, "\"seed\": 2");
  testing::WriteFile(out("b") + "/manifest.json", manifest);
  const Status edited = DatasetReader::Open(out("b"), nullptr, &reader);
  EXPECT_EQ(edited.code(), Status::Code::kDataLoss);
  EXPECT_NE(edited.message().find("does not match its contents"), std::string::npos) << edited.message();

  // The base's manifest edited (a class renamed): its checksum fails, named as the view's base.
  ASSERT_TRUE(Split(out("ds"), out("a2"), out("b2"), Fraction(0.5, 1), &ra, &rb).ok());
  std::string base = testing::ReadFile(out("ds") + "/manifest.json");
  base.replace(base.find("\"c1\""), 4, "\"cX\"");
  testing::WriteFile(out("ds") + "/manifest.json", base);
  const Status changed = DatasetReader::Open(out("a2"), nullptr, &reader);
  EXPECT_EQ(changed.code(), Status::Code::kDataLoss);
  EXPECT_EQ(changed.message().rfind("the base of view " + out("a2") + ": ", 0), 0u) << changed.message();
  EXPECT_FALSE(Verify(out("a2"), VerifyOptions(), &report).ok());
}

// Rules that cannot be met are refused naming the flag, and a refused view leaves no folder.
TEST_F(ViewTest, BadRulesAreRefusedNamingTheFlagAndLeaveNothing) {
  MakeTree(2, 5);
  PackResult packed;
  ASSERT_TRUE(PackTo(out("ds"), Options(), &packed).ok());
  ViewResult r;
  ViewOptions o;
  EXPECT_EQ(Subset(out("ds"), out("v"), o, &r).message(),
            "no rule to choose samples by: give --classes, --keys, --where, --fraction or --count");
  o.rule.classes = {"c9"};
  EXPECT_EQ(Subset(out("ds"), out("v"), o, &r).message(),
            "--classes: the dataset has no class 'c9' (its classes: c0, c1)");
  o.rule.classes.clear();
  o.rule.where = "width >= 10 and depth < 3";
  EXPECT_EQ(Subset(out("ds"), out("v"), o, &r).message().substr(0, 90),
            "--where 'width >= 10 and depth < 3': 'depth' is not a column of the sample table (--where ");
  o.rule.where = "width > 100000";
  EXPECT_EQ(Subset(out("ds"), out("v"), o, &r).message(),
            "no sample of " + out("ds") + " meets the rules {\"where\":\"width > 100000\"}: " + out("v") +
                " would be an empty view; nothing was written");
  EXPECT_FALSE(fs::exists(out("v")));
  ViewResult rb;
  o.rule.where = "width > 0";
  EXPECT_EQ(Split(out("ds"), out("a"), out("b"), o, &r, &rb).message(),
            "every sample of " + out("ds") + " meets the rules {\"where\":\"width > 0\"}: " + out("b") +
                " would be an empty view; nothing was written");
  EXPECT_FALSE(fs::exists(out("a")));
  EXPECT_FALSE(fs::exists(out("b")));
  o.rule.where = "format == tiff";
  EXPECT_EQ(Subset(out("ds"), out("v"), o, &r).message().substr(0, 87),
            "--where 'format == tiff': format takes an image format (jpeg, png, webp, bmp), not tiff");
  o.rule.where.clear();
  testing::WriteFile(dir_.Sub("keys.txt"), "000000001\nnot-a-key\n000000003\n");
  o.rule.keys_file = dir_.Sub("keys.txt");
  EXPECT_EQ(Subset(out("ds"), out("v"), o, &r).message(),
            "--keys: 1 of the 3 keys in " + dir_.Sub("keys.txt") + " are not samples of " + out("ds") +
                " that meet the other rules, the first 'not-a-key': check that the list is of this dataset");
  EXPECT_FALSE(fs::exists(out("v")));
  testing::WriteFile(dir_.Sub("keys.txt"), "000000001\n000000003\n");
  ASSERT_TRUE(Subset(out("ds"), out("v"), o, &r).ok());
  EXPECT_EQ(Keys(ReadAll(out("v"))), (std::vector<std::string>{"000000001", "000000003"}));
  const Status again = Subset(out("ds"), out("v"), o, &r);
  EXPECT_EQ(again.message(), out("v") + " is not empty: a view is written to a new or empty folder");
  // A command that needs a packed dataset says what a view is.
  PackResult appended;
  const Status append = Append(src(), out("v"), Options(), &appended);
  EXPECT_NE(append.message().find("is a view of ../ds (made by shardpack subset or split), not a packed dataset"),
            std::string::npos)
      << append.message();
}

}  // namespace
}  // namespace shardpack
