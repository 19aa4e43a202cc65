// Mixtures of datasets (shardpack/mixture.h): the stratified pattern keeps every prefix of an epoch
// within one sample of each source's exact share (checked for every prefix against floor and ceil
// computed here), quotas by hand, and a mixture of wds and lmdb delivers each sample's own fields and
// mask. python/tests/test_mixing.py checks the loader against a Python reference of the rules.
#include "shardpack/mixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "ops/diagnose/shuffle_quality.h"
#include "shardpack/loader.h"
#include "tests/support/dataset_fixture.h"

namespace shardpack {
namespace {

MixturePlan Plan(const std::vector<double>& weights, const std::vector<uint64_t>& sizes, uint64_t epoch_size = 0) {
  Mixture m;
  for (size_t i = 0; i < weights.size(); ++i) m.sources.push_back({"s" + std::to_string(i), weights[i], 0, 0});
  m.epoch_size = epoch_size;
  MixturePlan plan;
  const Status s = MixturePlan::Create(m, sizes, {}, SamplerOptions(), &plan);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return plan;
}

TEST(MixturePlan, QuotasByLargestRemainder) {
  // 100 x (1/6, 2/6, 3/6) = 16.67, 33.33, 50: floors 16, 33, 50 = 99; the largest remainder (0.67) gets the last.
  EXPECT_EQ(Plan({1, 2, 3}, {10, 30, 60}).quotas(), (std::vector<uint64_t>{17, 33, 50}));
  // An explicit epoch: 7 x 0.5 = 3.5 each; the tie goes to the earlier source.
  EXPECT_EQ(Plan({1, 1}, {100, 100}, 7).quotas(), (std::vector<uint64_t>{4, 3}));
}

TEST(MixturePlan, EveryPrefixHoldsFloorOrCeilOfEachShare) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const size_t n = 2 + rng() % 4;
    std::vector<double> weights;
    std::vector<uint64_t> sizes;
    for (size_t i = 0; i < n; ++i) {
      weights.push_back(double(1 + rng() % 97));
      sizes.push_back(1 + rng() % 300);
    }
    const MixturePlan plan = Plan(weights, sizes);
    const std::vector<uint32_t> pattern = plan.Pattern(0);
    ASSERT_EQ(pattern.size(), plan.epoch_size());
    const double e = double(plan.epoch_size());
    std::vector<uint64_t> count(n, 0);
    for (size_t p = 0; p < pattern.size(); ++p) {
      ++count[pattern[p]];
      for (size_t i = 0; i < n; ++i) {
        const double exact = double(p + 1) * double(plan.quotas()[i]) / e;
        ASSERT_GE(double(count[i]), std::floor(exact) - 1e-9) << "trial " << trial << " prefix " << p + 1;
        ASSERT_LE(double(count[i]), std::ceil(exact) + 1e-9) << "trial " << trial << " prefix " << p + 1;
      }
    }
    EXPECT_EQ(count, plan.quotas());
  }
}

TEST(MixturePlan, BadWeightsNameTheSource) {
  Mixture m;
  m.sources = {{"a", 1, 0, 0}, {"b", 0, 0, 0}};
  EXPECT_EQ(CheckMixture(m).message(), "source 2 (b): the weight must be a positive number, got 0");
  m.sources[1].weight = -1e-9;  // std::to_string printed "-0.000000"
  EXPECT_EQ(CheckMixture(m).message(), "source 2 (b): the weight must be a positive number, got -1e-09");
  m.sources[1].weight = std::nan("");
  EXPECT_EQ(CheckMixture(m).message(), "source 2 (b): the weight is not a number");
  m.sources[1].weight = 1;
  m.sources[0].location.clear();
  EXPECT_EQ(CheckMixture(m).message(), "source 1 (): the location is empty");
  EXPECT_EQ(CheckMixture(Mixture()).message(), "a mixture needs at least one source");
  m.sources[0].location = "a";
  m.sources[1].samples = 50;
  m.epoch_size = 40;
  MixturePlan plan;
  EXPECT_EQ(MixturePlan::Create(m, {10, 10}, {}, SamplerOptions(), &plan).message(),
            "the sources' fixed quotas (samples, passes) add up to 50 samples, which does not fit an epoch_size of 40");
}

// Quotas no memory can hold are refused when the plan is made (they used to open, report an
// absurd length, and end the process from the loader's thread on the first batch), and so are
// weights whose sum is not a number; a weight too small to give its source a sample is warned of.
TEST(MixturePlan, QuotasBeyondAnEpochsBoundAndOverflowingWeightsAreRefused) {
  const std::string bound = std::to_string(kMaxEpochSamples);
  EXPECT_EQ(bound, "17179869184");  // 2^34, by hand
  Mixture m;
  m.sources = {{"a", 1, uint64_t(1) << 40, 0}, {"b", 1, 0, 0}};
  EXPECT_EQ(CheckMixture(m).message(),
            "source 1 (a): samples is 1099511627776, more than the " + bound + " samples an epoch may hold");
  m.sources[0] = {"a", 1, 0, 1e30};
  MixturePlan plan;
  EXPECT_EQ(
      MixturePlan::Create(m, {10, 10}, {}, SamplerOptions(), &plan).message(),
      "source 1 (a): 1e+30 passes over its 10 samples make more than the " + bound + " samples an epoch may hold");
  m.sources[0] = {"a", 1, 0, 0};
  m.epoch_size = uint64_t(1) << 62;
  EXPECT_EQ(CheckMixture(m).message(),
            "epoch_size is 4611686018427387904, more than the " + bound + " samples an epoch may hold");
  m.epoch_size = 0;
  m.sources = {{"a", 1e308, 0, 0}, {"b", 1e308, 0, 0}};
  EXPECT_EQ(CheckMixture(m).message(),
            "the weights add up to more than a floating-point number holds: scale them down (only their ratios "
            "count)");
  // Two quotas each within the bound whose sum is not.
  m.sources = {{"a", 1, kMaxEpochSamples, 0}, {"b", 1, kMaxEpochSamples, 0}};
  EXPECT_EQ(MixturePlan::Create(m, {10, 10}, {}, SamplerOptions(), &plan).message(),
            "the sources' fixed quotas (samples, passes) add up to " + std::to_string(2 * kMaxEpochSamples) +
                " samples, more than the " + bound + " an epoch may hold");
  // 1e-12 of 200 samples is 2e-10 of one: no sample, and a warning that says so.
  m.sources = {{"a", 1, 0, 0}, {"b", 1e-12, 0, 0}};
  ASSERT_TRUE(MixturePlan::Create(m, {100, 100}, {}, SamplerOptions(), &plan).ok());
  EXPECT_EQ(plan.quotas(), (std::vector<uint64_t>{200, 0}));
  ASSERT_EQ(plan.warnings().size(), 1u);
  EXPECT_EQ(plan.warnings()[0],
            "source 2 (b): its weight 1e-12 gives it 2e-10 of the epoch's 200 weighted samples, so it gives none: "
            "raise its weight, or give it samples or passes");
  ASSERT_TRUE(MixturePlan::Create(m, {100, 100}, {}, SamplerOptions(), &plan).ok());
  EXPECT_EQ(plan.warnings().size(), 1u);  // made again: not doubled
  // A weight of 1e308 beside 1: the rest times the weight overflows a double; the share first
  // does not (fuzz_mixture found the overflow, undefined behaviour in the cast; UBSan checks it).
  m.sources = {{"a", 1e308, 0, 0}, {"b", 1, 0, 0}};
  ASSERT_TRUE(MixturePlan::Create(m, {10, 10}, {}, SamplerOptions(), &plan).ok());
  EXPECT_EQ(plan.quotas(), (std::vector<uint64_t>{20, 0}));
}

TEST(ShuffleQuality, MeanBatchShardDistanceByHand) {
  // Two shards of 4 (indices 0-3 and 4-7); the epoch's shares are 1/2 each.
  const std::vector<uint64_t> starts = {0, 4, 8};
  const std::vector<double> counts = {4, 4};
  // Batches of 4 from one shard each: 1/2 (|1 - 1/2| + |0 - 1/2|) = 1/2.
  EXPECT_DOUBLE_EQ(MeanBatchShardDistance({0, 1, 2, 3, 4, 5, 6, 7}, starts, counts, 8, 4), 0.5);
  // Alternating: every batch of 2 a miniature of the epoch.
  EXPECT_DOUBLE_EQ(MeanBatchShardDistance({0, 4, 1, 5, 2, 6, 3, 7}, starts, counts, 8, 2), 0.0);
  // Batches of 4 holding 3 + 1 and 1 + 3: 1/2 (1/4 + 1/4) = 1/4 each.
  EXPECT_DOUBLE_EQ(MeanBatchShardDistance({0, 1, 2, 4, 3, 5, 6, 7}, starts, counts, 8, 4), 0.25);
  // A last partial batch does not count: 7 samples (shares 4/7, 3/7), batch 4 -> one batch.
  EXPECT_DOUBLE_EQ(MeanBatchShardDistance({0, 1, 2, 3, 4, 5, 6}, {0, 4, 7}, {4, 3}, 7, 4),
                   0.5 * ((1 - 4.0 / 7) + 3.0 / 7));
  // Only the batches given count (a window of the epoch), against the whole epoch's shares.
  EXPECT_DOUBLE_EQ(MeanBatchShardDistance({0, 4}, starts, counts, 8, 2), 0.0);
  EXPECT_DOUBLE_EQ(MeanBatchShardDistance({0, 1}, starts, counts, 8, 2), 0.5);
}

TEST(ShuffleQuality, TheIdealIsTheHypergeometricExpectationByHand) {
  // Two shards of 2 samples, batches of 2: a random batch holds 0, 1 or 2 of shard 0's samples with
  // probabilities C(2,x) C(2,2-x) / C(4,2) = 1/6, 4/6, 1/6, and TV = |x/2 - 1/2|: 1/6 (1/2) + 1/6 (1/2).
  EXPECT_DOUBLE_EQ(ExpectedRandomBatchDistance({2, 2}, 4, 2), 1.0 / 6);
  // One shard: every batch is the epoch in miniature.
  EXPECT_DOUBLE_EQ(ExpectedRandomBatchDistance({10}, 10, 3), 0.0);
  // Shards of 1 and 3, batches of 2 from 4: shard 0 is in a batch with probability 1/2, and TV is
  // then |1/2 - 1/4| = 1/4, else 1/4 as well: 1/4.
  EXPECT_DOUBLE_EQ(ExpectedRandomBatchDistance({1, 3}, 4, 2), 0.25);
  // Fractional counts (a mixture's expected ones), by the binomials' Gamma form: counts 1.5 and 2.5,
  // batches of 2 from 4. Shard 0 holds x = 0 or 1 with weights C(1.5,0) C(2.5,2) = 1.875 and
  // C(1.5,1) C(2.5,1) = 3.75 (1/3, 2/3), share 3/8: 1/3 (3/8) + 2/3 (1/8) = 5/24; shard 1 likewise
  // (x = 1 or 2 with 2/3, 1/3, share 5/8): 5/24. Half their sum: 5/24.
  EXPECT_DOUBLE_EQ(ExpectedRandomBatchDistance({1.5, 2.5}, 4, 2), 5.0 / 24);
  // No whole batch: nothing to measure.
  EXPECT_EQ(ExpectedRandomBatchDistance({2, 2}, 4, 5), 0.0);
}

// A billion samples (100,000 shards of 10,000): the statistic reads the first 2^20 samples of each
// order and never makes an epoch's order whole (the code before took 8 GB and minutes an order).
TEST(ShuffleQuality, ABillionSamplesCostTheWindowNotTheEpoch) {
  SamplerOptions o;
  o.batch_size = 64;
  o.seed = 3;
  ShuffleQuality q;
  ASSERT_TRUE(MeasureShuffleQuality(nullptr, {std::vector<uint64_t>(100000, 10000)}, o, {1000}, 0, &q).ok());
  EXPECT_EQ(q.shards, 100000u);
  EXPECT_EQ(q.batches, (uint64_t(1) << 20) / 64);
  // By hand: every shard's share is 1/100,000 and a batch's share of a shard it holds at least
  // 1/64, so TV = 1 - (shards in the batch) / 100,000, and a batch of 64 holds 100,000 (1 - P) of
  // them on average, P = prod over j < 64 of (10^9 - 10^4 - j) / (10^9 - j), the chance a shard is
  // missed: the ideal is P.
  double missed = 1;
  for (int j = 0; j < 64; ++j) missed *= (1e9 - 1e4 - j) / (1e9 - j);
  EXPECT_NEAR(q.ideal, missed, 1e-12);
  // The global shuffle: 64 distinct shards a batch but for rare pairs (0.02 a batch), so within
  // 1e-7 of the ideal over 16,384 batches.
  EXPECT_NEAR(q.global, q.ideal, 1e-7);
  EXPECT_EQ(q.loader, q.global);
  // A buffer of 1,000 samples streams a shard or two at a time: about 1 - 1/100,000.
  EXPECT_GT(q.buffers.at(0).second, 1 - 4e-5);
}

TEST(ShuffleQuality, BufferShuffleOfSortedShardsIsFarFromTheIdeal) {
  // 200 shards of 100 samples; a buffer of 1,000 holds samples of about 10 shards at a time.
  SamplerOptions o;
  o.batch_size = 64;
  o.shuffle_buffer = 1000;
  ShuffleQuality q;
  ASSERT_TRUE(MeasureShuffleQuality(nullptr, {std::vector<uint64_t>(200, 100)}, o, {1000, 100000}, 0, &q).ok());
  EXPECT_EQ(q.shards, 200u);
  EXPECT_EQ(q.loader, q.buffers[0].second);
  // The ideal by hand: every shard a batch holds has a share of at least 1/64 > 1/200, so
  // TV = 1 - (shards in the batch) / 200, and a batch of 64 drawn without replacement from 200 x 100
  // samples holds 200 x (1 - P(a shard is missed)) shards on average, P = prod (19900 - j) / (20000 - j).
  double missed = 1;
  for (int j = 0; j < 64; ++j) missed *= (19900.0 - j) / (20000.0 - j);
  const double ideal = missed;  // 1 - 200 x (1 - missed) / 200
  EXPECT_NEAR(q.ideal, ideal, 0.01);
  EXPECT_GT(q.buffers[0].second, q.ideal + 0.1);
  // A buffer larger than the dataset, and the global shuffle, are within noise of the ideal.
  EXPECT_NEAR(q.buffers[1].second, ideal, 0.01);
  EXPECT_NEAR(q.global, ideal, 0.01);
}

class MixtureLoaderTest : public testing::DatasetTest {
 protected:
  // `count` PNGs in c0/, each with a caption "<tag> <i>" and a mask of the constant value `first` + i.
  void PackWithFields(const std::string& name, const std::string& format, int count, int first) {
    const std::string src_dir = dir_.Sub(name + "-src");
    for (int i = 0; i < count; ++i) {
      const int w = 20 + i, h = 16 + i;
      const std::string stem = src_dir + "/c0/img" + std::to_string(i);
      testing::WriteFile(stem + ".png", testing::MakeImage(ImageFormat::kPng, w, h, uint64_t(first + i)));
      testing::WriteFile(stem + ".txt", name + " " + std::to_string(i));
      testing::WriteFile(stem + ".seg.png", testing::EncodeGreyPng(std::string(size_t(w) * h, char(first + i)), w, h));
    }
    PackOptions po = QuietOptions();
    po.format = testing::FormatNamed(format);
    po.samples_per_shard = 3;
    PackResult r;
    const Status s = Pack(src_dir, out(name), po, &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
};

TEST_F(MixtureLoaderTest, EachSampleBringsItsOwnFieldsAndMask) {
  PackWithFields("web", "wds", 9, 10);
  PackWithFields("curated", "lmdb", 4, 100);
  Mixture m;
  m.sources = {{out("web"), 0.5, 0, 0}, {out("curated"), 0.5, 0, 0}};
  LoaderOptions o;
  o.sampler.batch_size = 4;
  o.height = o.width = 8;
  o.threads = 2;
  o.fields = {"txt"};
  o.mask = "seg.png";
  std::unique_ptr<Loader> loader;
  Status s = Loader::Open(m, o, &loader);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Each source's captions by key, read through its own reader.
  std::map<std::pair<uint32_t, std::string>, std::string> captions;
  for (uint32_t source = 0; source < 2; ++source) {
    std::unique_ptr<DatasetReader> reader;
    ASSERT_TRUE(DatasetReader::Open(m.sources[source].location, nullptr, &reader).ok());
    for (uint64_t i = 0; i < reader->size(); ++i) {
      ReadSample sample;
      std::string text;
      bool present = false;
      ASSERT_TRUE(reader->Read(i, &sample).ok());
      ASSERT_TRUE(reader->ReadField(i, "txt", &text, &present).ok() && present);
      captions[{source, sample.key}] = text;
    }
  }
  ASSERT_TRUE(loader->StartEpoch(0).ok());
  std::map<uint32_t, int> per_source;
  const Batch* batch = nullptr;
  while ((s = loader->Next(&batch)).ok() && batch != nullptr) {
    for (uint32_t i = 0; i < batch->count; ++i) {
      const uint32_t source = batch->sources[i];
      ++per_source[source];
      EXPECT_EQ(source, batch->indices[i] < 9 ? 0u : 1u);
      ASSERT_TRUE(batch->fields[0][i].has_value());
      EXPECT_EQ(*batch->fields[0][i], captions.at({source, batch->keys[i]}));
      // The caption names the image: "<dataset> <i>", and the mask holds first + i everywhere.
      const std::string& caption = *batch->fields[0][i];
      const int image = std::stoi(caption.substr(caption.find(' ') + 1));
      const uint8_t expected = uint8_t((source == 0 ? 10 : 100) + image);
      for (size_t p = 0; p < 64; ++p) ASSERT_EQ(batch->masks[i * 64 + p], expected) << caption;
    }
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  // An epoch of 13 at 0.5 / 0.5: 6.5 each, the tie to the first source; the second repeats.
  EXPECT_EQ(per_source, (std::map<uint32_t, int>{{0, 7}, {1, 6}}));
}

}  // namespace
}  // namespace shardpack
