// The cache folder's defences (storage/cache_folder.h): who may own it, what it is made with, what is
// checked before a cached file is served, and what a planted name or a vanished file does. Shards
// are real files with their real XXH64, served through the HttpClient seam
// (tests/support/folder_http_client.h); permissions and owners are the kernel's own.
#include "storage/cache_folder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "ground/checksum.h"
#include "storage/anchored_env.h"
#include "storage/remote_shard_store.h"
#include "storage/shard_download.h"
#include "tests/support/folder_http_client.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"

namespace shardpack {
namespace {

namespace fs = std::filesystem;

uint32_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return uint32_t(st.st_mode & 07777);
}

// A file system that says it is NFS.
class NfsEnv final : public testing::ForwardingEnv {
 public:
  Status FileSystemType(const std::string&, std::string* type, bool* network) override {
    *type = "nfs";
    *network = true;
    return Status::OK();
  }
};

// Another process evicts `path` between this one's lookup and its open: the first open of it
// finds the file gone.
class EvictingEnv final : public testing::ForwardingEnv {
 public:
  explicit EvictingEnv(std::string path) : path_(std::move(path)) {}
  Status NewRandomAccessFile(const std::string& p, std::unique_ptr<RandomAccessFile>* f) override {
    if (p == path_ && !evicted_) {
      evicted_ = true;
      RemoveCachedCopy(base_, p);
    }
    return base_->NewRandomAccessFile(p, f);
  }
  bool evicted() const { return evicted_; }

 private:
  const std::string path_;
  bool evicted_ = false;  // one reader thread in these tests
};

class CacheFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.Sub("server"));
    for (int i = 0; i < 3; ++i) {
      const std::string name = "shard-" + std::to_string(i) + ".tar";
      const std::string bytes(1000, char('a' + i));
      testing::WriteFile(dir_.Sub("server/" + name), bytes);
      shards_.push_back({"http://test/" + name, cache() + "/" + name, bytes.size(), ChecksumHex(Xxh64(bytes))});
    }
  }
  std::string cache() const { return dir_.Sub("cache"); }
  std::unique_ptr<RemoteShardStore> NewStore(Env* env) {
    const std::string server = dir_.Sub("server");
    return std::make_unique<RemoteShardStore>(env, shards_, ShardStoreOptions(), [this, server] {
      return std::make_unique<testing::FolderHttpClient>(server, &log_, &mu_);
    });
  }
  std::string PinnedBytes(RemoteShardStore* store, size_t shard) {
    std::shared_ptr<const RandomAccessFile> f;
    const Status s = store->Pin(shard, &f);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return "";
    std::string bytes(shards_[shard].bytes, '\0');
    EXPECT_TRUE(f->Read(0, bytes.size(), bytes.data()).ok());
    return bytes;
  }
  size_t Requests(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return size_t(std::count(log_.begin(), log_.end(), name));
  }

  testing::TempDir dir_;
  std::vector<RemoteShard> shards_;
  std::mutex mu_;
  std::vector<std::string> log_;
};

TEST_F(CacheFolderTest, FoldersAndFilesArePrivateByDefault) {
  ASSERT_TRUE(PrepareCacheFolder(Env::Default(), cache(), CacheModes()).ok());
  EXPECT_EQ(ModeOf(cache()), 0700u);
  auto store = NewStore(Env::Default());
  EXPECT_EQ(PinnedBytes(store.get(), 0), std::string(1000, 'a'));
  EXPECT_EQ(ModeOf(shards_[0].path), 0600u);
  EXPECT_EQ(ModeOf(shards_[0].path + ".checked-" + std::to_string(::geteuid())), 0600u);
  EXPECT_EQ(ModeOf(shards_[0].path + ".lock"), 0600u);
}

TEST_F(CacheFolderTest, ATeamCacheIsTheGroupsWithTheSetGroupIdBit) {
  CacheModes team;
  team.team = true;
  ASSERT_TRUE(PrepareCacheFolder(Env::Default(), cache(), team).ok());
  EXPECT_EQ(ModeOf(cache()), 02770u);
  testing::FolderHttpClient http(dir_.Sub("server"), &log_, &mu_);
  ASSERT_TRUE(
      FetchIntoCache(Env::Default(), &http, shards_[1].url, shards_[1].path, shards_[1].xxh64, shards_[1].bytes, team)
          .ok());
  EXPECT_EQ(ModeOf(shards_[1].path), 0660u);
  // The record is this user's alone: a team member cannot rewrite it to vouch for a planted file.
  EXPECT_EQ(ModeOf(shards_[1].path + ".checked-" + std::to_string(::geteuid())), 0640u);
}

TEST_F(CacheFolderTest, AFolderOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a folder to another user needs root";
  fs::create_directories(cache());
  ASSERT_EQ(::chown(cache().c_str(), 12345, 12345), 0);
  EXPECT_EQ(PrepareCacheFolder(Env::Default(), cache(), CacheModes()).message(),
            "the cache folder " + cache() +
                " belongs to user 12345, not to you (user 0): refused (its owner could plant files in it or read "
                "yours); use a folder of your own, or, for a cache a team shares on purpose, a folder of the team's "
                "group with SHARDPACK_CACHE_TEAM=1 (docs/remote.md)");
  // A team cache takes it only when its group is one of this user's.
  CacheModes team;
  team.team = true;
  EXPECT_FALSE(PrepareCacheFolder(Env::Default(), cache(), team).ok());
  ASSERT_EQ(::chown(cache().c_str(), 12345, ::getegid()), 0);
  EXPECT_TRUE(PrepareCacheFolder(Env::Default(), cache(), team).ok());
}

TEST_F(CacheFolderTest, AWorldWritableFolderIsRefused) {
  fs::create_directories(cache());
  ASSERT_EQ(::chmod(cache().c_str(), 0777), 0);
  EXPECT_EQ(PrepareCacheFolder(Env::Default(), cache(), CacheModes()).message(),
            "the cache folder " + cache() +
                " is writable by every user (mode 0777): refused (anyone could plant files in it); run chmod o-w on "
                "it, or use a folder of your own");
}

TEST_F(CacheFolderTest, ASymbolicLinkAsTheFolderIsRefused) {
  fs::create_directories(dir_.Sub("elsewhere"));
  fs::create_directory_symlink(dir_.Sub("elsewhere"), cache());
  EXPECT_EQ(PrepareCacheFolder(Env::Default(), cache(), CacheModes()).message(),
            "the cache folder " + cache() +
                " is a symbolic link: refused (another user could point it elsewhere); give the folder it points to");
}

TEST_F(CacheFolderTest, ANetworkFileSystemIsRefused) {
  NfsEnv nfs;
  EXPECT_EQ(PrepareCacheFolder(&nfs, cache(), CacheModes()).message(),
            "the cache folder " + cache() +
                " is on a network file system (nfs), where the file locks that let the processes of a node share a "
                "cache do not hold (between machines, often not at all): refused; use a local disk (a local SSD, "
                "/tmp, /dev/shm)");
}

TEST_F(CacheFolderTest, ADamagedCopyOfTheSameSizeIsNotServedButFetchedAgain) {
  fs::create_directories(cache());
  EXPECT_EQ(PinnedBytes(NewStore(Env::Default()).get(), 2), std::string(1000, 'c'));
  ASSERT_EQ(Requests("shard-2.tar"), 1u);
  {  // 64 bytes flipped in place: the size stays
    std::fstream f(shards_[2].path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f << std::string(64, 'X');
  }
  ASSERT_EQ(fs::file_size(shards_[2].path), 1000u);
  EXPECT_EQ(PinnedBytes(NewStore(Env::Default()).get(), 2), std::string(1000, 'c'));
  EXPECT_EQ(Requests("shard-2.tar"), 2u);
  EXPECT_EQ(testing::ReadFile(shards_[2].path), std::string(1000, 'c'));
}

TEST_F(CacheFolderTest, ACopyWithoutARecordIsHashedOnceAndKept) {
  fs::create_directories(cache());
  fs::copy_file(dir_.Sub("server/shard-1.tar"), shards_[1].path);
  EXPECT_EQ(PinnedBytes(NewStore(Env::Default()).get(), 1), std::string(1000, 'b'));
  EXPECT_EQ(Requests("shard-1.tar"), 0u);
  EXPECT_TRUE(IsCheckedCopy(Env::Default(), shards_[1].path, shards_[1].xxh64));
  // A record of another file does not vouch for this one: a new file of the same bytes and size
  // (another inode) is hashed again, and a changed record is no record.
  EXPECT_FALSE(IsCheckedCopy(Env::Default(), shards_[1].path, shards_[0].xxh64));
  fs::remove(shards_[1].path);
  fs::copy_file(dir_.Sub("server/shard-1.tar"), shards_[1].path);
  EXPECT_FALSE(IsCheckedCopy(Env::Default(), shards_[1].path, shards_[1].xxh64));
}

TEST_F(CacheFolderTest, PlantedSymbolicLinksAreNeverFollowed) {
  fs::create_directories(cache());
  const std::string victim = dir_.Sub("victim"), other = dir_.Sub("other");
  testing::WriteFile(victim, std::string(1000, 'z'));
  testing::WriteFile(other, "keep me");
  // At the shard's own name (of its size), and at the temporary name this process will write.
  fs::create_symlink(victim, shards_[1].path);
  fs::create_symlink(other, shards_[1].path + ".part-" + std::to_string(::getpid()));
  EXPECT_EQ(PinnedBytes(NewStore(Env::Default()).get(), 1), std::string(1000, 'b'));
  EXPECT_EQ(Requests("shard-1.tar"), 1u);
  EXPECT_EQ(testing::ReadFile(victim), std::string(1000, 'z'));
  EXPECT_EQ(testing::ReadFile(other), "keep me");
  EXPECT_FALSE(fs::is_symlink(shards_[1].path));
  EXPECT_EQ(testing::ReadFile(shards_[1].path), std::string(1000, 'b'));
}

TEST_F(CacheFolderTest, AShardEvictedBetweenLookupAndOpenIsFetchedAgain) {
  fs::create_directories(cache());
  EXPECT_EQ(PinnedBytes(NewStore(Env::Default()).get(), 0), std::string(1000, 'a'));
  EvictingEnv env(shards_[0].path);
  auto store = NewStore(&env);  // finds shard 0 checked in the cache
  EXPECT_EQ(PinnedBytes(store.get(), 0), std::string(1000, 'a'));
  EXPECT_TRUE(env.evicted());
  EXPECT_EQ(Requests("shard-0.tar"), 2u);
}

}  // namespace
}  // namespace shardpack

namespace shardpack {
namespace {

std::string Record(const std::string& path) { return path + ".checked-" + std::to_string(::geteuid()); }

// A record another user could have written (theirs, or group-writable) vouches for nothing: the copy
// is hashed again, and a planted one is replaced. (tests/interop/cache_attack_test.py does the same
// as a second user, with the loader.)
TEST_F(CacheFolderTest, ARecordThisUserDidNotWriteIsNotTrusted) {
  ASSERT_TRUE(PrepareCacheFolder(Env::Default(), cache(), CacheModes()).ok());
  testing::FolderHttpClient http(dir_.Sub("server"), &log_, &mu_);
  const RemoteShard& shard = shards_[0];
  ASSERT_TRUE(
      FetchIntoCache(Env::Default(), &http, shard.url, shard.path, shard.xxh64, shard.bytes, CacheModes()).ok());
  ASSERT_TRUE(IsCheckedCopy(Env::Default(), shard.path, shard.xxh64));
  // Planted bytes of the same size, and a record forged to match them (as the planter can write it).
  testing::WriteFile(shard.path, std::string(1000, 'z'));
  struct stat st;
  ASSERT_EQ(::stat(shard.path.c_str(), &st), 0);
  const std::string forged = shard.xxh64 + " 1000 " + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) +
                             " " + std::to_string(int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec) + " " +
                             std::to_string(int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec) + "\n";
  fs::remove(Record(shard.path));
  testing::WriteFile(Record(shard.path), forged);
  ASSERT_EQ(::chmod(Record(shard.path).c_str(), 0600), 0);
  // Written by this user, the forged text would pass (this is what the record's fields alone allow):
  EXPECT_TRUE(IsCheckedCopy(Env::Default(), shard.path, shard.xxh64));
  // ...so it must be this user's and nobody else's to write.
  ASSERT_EQ(::chmod(Record(shard.path).c_str(), 0620), 0);
  EXPECT_FALSE(IsCheckedCopy(Env::Default(), shard.path, shard.xxh64));
  if (::geteuid() == 0) {
    ASSERT_EQ(::chmod(Record(shard.path).c_str(), 0600), 0);
    ASSERT_EQ(::chown(Record(shard.path).c_str(), 12345, 12345), 0);
    EXPECT_FALSE(IsCheckedCopy(Env::Default(), shard.path, shard.xxh64));
  }
  // The store hashes the planted copy, finds it wrong, and downloads the shard again.
  auto store = NewStore(Env::Default());
  EXPECT_EQ(PinnedBytes(store.get(), 0), std::string(1000, 'a'));
  EXPECT_EQ(Requests("shard-0.tar"), 2u);
}

// A copy replaced after it was checked is refused when it is opened: the opened file's identity, not
// the path's, is compared with the record.
TEST_F(CacheFolderTest, OpenCheckedCopyComparesTheOpenedFile) {
  ASSERT_TRUE(PrepareCacheFolder(Env::Default(), cache(), CacheModes()).ok());
  testing::FolderHttpClient http(dir_.Sub("server"), &log_, &mu_);
  const RemoteShard& shard = shards_[0];
  ASSERT_TRUE(
      FetchIntoCache(Env::Default(), &http, shard.url, shard.path, shard.xxh64, shard.bytes, CacheModes()).ok());
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_TRUE(OpenCheckedCopy(Env::Default(), shard.path, shard.xxh64, &file).ok());
  // Another file renamed over it: the old handle still reads the checked bytes, a new open is refused.
  testing::WriteFile(shard.path + ".new", std::string(1000, 'z'));
  fs::rename(shard.path + ".new", shard.path);
  EXPECT_TRUE(IsCheckedOpenCopy(Env::Default(), shard.path, *file, shard.xxh64) == false);
  const Status s = OpenCheckedCopy(Env::Default(), shard.path, shard.xxh64, &file);
  EXPECT_EQ(s.code(), Status::Code::kDataLoss);
  EXPECT_EQ(s.message(), shard.path + " is not the copy that was checked (changed or replaced since)");
}

// Whoever may rename entries in a folder above the cache could put a folder of theirs in its place:
// such a folder is refused; /tmp's sticky bit keeps others from renaming what is not theirs.
TEST_F(CacheFolderTest, AFolderAboveThatAnotherUserCanChangeIsRefused) {
  const std::string parent = dir_.Sub("job");
  fs::create_directories(parent);
  const std::string cache_dir = parent + "/cache";
  ASSERT_EQ(::chmod(parent.c_str(), 0777), 0);
  EXPECT_EQ(PrepareCacheFolder(Env::Default(), cache_dir, CacheModes()).message(),
            "the cache folder " + cache_dir + " lies in " + parent +
                ", which every user may write in (mode 0777, no sticky bit): refused (they could put a folder of "
                "theirs in the cache folder's place); use a cache folder inside folders only you (and root) can "
                "change, such as your home or a folder of yours in /tmp (docs/remote.md)");
  ASSERT_EQ(::chmod(parent.c_str(), 01777), 0);  // as /tmp
  EXPECT_TRUE(PrepareCacheFolder(Env::Default(), cache_dir, CacheModes()).ok());
  ASSERT_EQ(::chmod(parent.c_str(), 0755), 0);
  if (::geteuid() != 0) return;
  ASSERT_EQ(::chown(parent.c_str(), 12345, 12345), 0);  // a predictable /tmp/$JOBID made by someone else
  EXPECT_EQ(PrepareCacheFolder(Env::Default(), cache_dir, CacheModes()).message(),
            "the cache folder " + cache_dir + " lies in " + parent +
                ", which belongs to user 12345: refused (its owner could put a folder of theirs in the cache folder's "
                "place); use a cache folder inside folders only you (and root) can change, such as your home or a "
                "folder of yours in /tmp (docs/remote.md)");
  ASSERT_EQ(::chown(parent.c_str(), 0, 12345), 0);
  ASSERT_EQ(::chmod(parent.c_str(), 0775), 0);  // writable by a group this user is not in
  EXPECT_EQ(PrepareCacheFolder(Env::Default(), cache_dir, CacheModes()).message(),
            "the cache folder " + cache_dir + " lies in " + parent +
                ", which group 12345 may write in (mode 0775, no sticky bit): refused (they could put a folder of "
                "theirs in the cache folder's place); use a cache folder inside folders only you (and root) can "
                "change, such as your home or a folder of yours in /tmp (docs/remote.md)");
}

}  // namespace
}  // namespace shardpack

namespace shardpack {
namespace {

// The folder is opened once, after its check: a folder swapped in under its name afterwards (by
// whoever could rename it) is never read or written, and messages keep the folder's own name.
TEST_F(CacheFolderTest, AnAnchoredCacheFolderIsTheOneOpenedNotTheOneNamedNow) {
  ASSERT_TRUE(PrepareCacheFolder(Env::Default(), cache(), CacheModes()).ok());
  testing::WriteFile(cache() + "/shard-0.tar", std::string(1000, 'a'));
  std::unique_ptr<Env> anchored;
  ASSERT_TRUE(AnchorEnvAt(Env::Default(), cache(), &anchored).ok());
  fs::rename(cache(), cache() + "-moved");
  fs::create_directories(cache());
  testing::WriteFile(cache() + "/shard-0.tar", std::string(1000, 'z'));  // the planted copy
  std::string bytes;
  ASSERT_TRUE(anchored->ReadFile(cache() + "/shard-0.tar", 4096, &bytes).ok());
  EXPECT_EQ(bytes, std::string(1000, 'a'));
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_TRUE(anchored->NewRandomAccessFile(cache() + "/shard-0.tar", &file).ok());
  FileStat folder;
  ASSERT_TRUE(anchored->StatPath(cache(), &folder).ok());
  EXPECT_EQ(folder.type, FileStat::Type::kDirectory);
  ASSERT_TRUE(WriteCacheFile(anchored.get(), cache() + "/new.tar", "fresh", CacheModes(), false).ok());
  EXPECT_TRUE(fs::exists(cache() + "-moved/new.tar"));  // written where the folder is now
  EXPECT_FALSE(fs::exists(cache() + "/new.tar"));
  const Status missing = anchored->ReadFile(cache() + "/absent.tar", 10, &bytes);
  EXPECT_EQ(missing.message(), "cannot open " + cache() + "/absent.tar: No such file or directory");
  // Paths elsewhere pass through.
  ASSERT_TRUE(anchored->ReadFile(dir_.Sub("server/shard-1.tar"), 4096, &bytes).ok());
  EXPECT_EQ(bytes, std::string(1000, 'b'));
  // A folder swapped between its check and its opening is refused.
  fs::remove_all(cache());
  ASSERT_TRUE(PrepareCacheFolder(Env::Default(), cache(), CacheModes()).ok());
  FileStat checked;
  ASSERT_TRUE(Env::Default()->StatPath(cache(), &checked).ok());
  fs::rename(cache(), cache() + "-other");
  fs::create_directories(cache());
  class SwappedEnv final : public testing::ForwardingEnv {
   public:
    explicit SwappedEnv(FileStat st) : st_(st) {}
    Status StatPath(const std::string&, FileStat* st) override {
      *st = st_;  // what the check saw
      return Status::OK();
    }

   private:
    FileStat st_;
  } swapped(checked);
  EXPECT_EQ(AnchorEnvAt(&swapped, cache(), &anchored).message(),
            "the cache folder " + cache() +
                " was replaced between its check and its opening: refused (another user may be swapping it); check "
                "who can write in the folders above it");
}

}  // namespace
}  // namespace shardpack
