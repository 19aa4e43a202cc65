// RemoteShardList (storage/remote_shard_list.h): a manifest's shards as the store asks for them,
// each built from the shared shard table: the URL percent-encoded once under the dataset's URL,
// the path in the cache folder (none when streaming), the manifest's size and checksum. Expected
// values are written out by hand.
#include "storage/remote_shard_list.h"

#include <gtest/gtest.h>

namespace shardpack {
namespace {

std::shared_ptr<const CompactManifest> TwoShards() {
  Manifest m;
  ShardEntry a;
  a.file = "train/shard 000000.tar";
  a.bytes = 10240;
  a.samples = 3;
  a.xxh64 = "0123456789abcdef";
  ShardEntry b;
  b.file = "train/shard-000001.tar";
  b.bytes = 20480;
  b.samples = 4;
  m.shards = {a, b};
  m.samples = 7;
  return std::make_shared<const CompactManifest>(std::move(m));
}

TEST(RemoteShardList, AManifestsShardsAreBuiltWhenAsked) {
  const auto cached = NewManifestShardList("http://127.0.0.1:8080/ds", "/cache/ds-1", TwoShards());
  ASSERT_EQ(cached->size(), 2u);
  EXPECT_FALSE(cached->streaming());
  EXPECT_EQ(cached->name(0), "train/shard 000000.tar");
  EXPECT_EQ(cached->bytes(1), 20480u);
  EXPECT_EQ(cached->path(1), "/cache/ds-1/train/shard-000001.tar");
  const RemoteShard first = cached->shard(0);
  EXPECT_EQ(first.url, "http://127.0.0.1:8080/ds/train/shard%20000000.tar");
  EXPECT_EQ(first.path, "/cache/ds-1/train/shard 000000.tar");
  EXPECT_EQ(first.bytes, 10240u);
  EXPECT_EQ(first.xxh64, "0123456789abcdef");
  EXPECT_EQ(cached->shard(1).xxh64, "");  // the manifest gave none

  const auto streamed = NewManifestShardList("https://host/ds", "", TwoShards());
  EXPECT_TRUE(streamed->streaming());
  EXPECT_EQ(streamed->path(0), "");
  EXPECT_EQ(streamed->shard(1).url, "https://host/ds/train/shard-000001.tar");
  EXPECT_EQ(streamed->shard(1).path, "");
}

TEST(RemoteShardList, GivenShardsAreNamedByTheirUrls) {
  const auto list = NewRemoteShardList({{"http://h/a.tar", "", 0, ""}, {"http://h/b.tar", "", 5, "ff"}});
  ASSERT_EQ(list->size(), 2u);
  EXPECT_TRUE(list->streaming());
  EXPECT_EQ(list->name(1), "http://h/b.tar");
  EXPECT_EQ(list->bytes(1), 5u);
  EXPECT_EQ(list->shard(1).xxh64, "ff");
  EXPECT_FALSE(NewRemoteShardList({{"http://h/a.tar", "/c/a.tar", 1, ""}})->streaming());
}

}  // namespace
}  // namespace shardpack
