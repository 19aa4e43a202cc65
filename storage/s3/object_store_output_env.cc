#include "storage/s3/object_store_output_env.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "ground/checksum.h"
#include "ground/status_of_call.h"
#include "shardpack/manifest.h"
#include "storage/http/http_client.h"
#include "storage/s3/s3_object_store.h"

namespace shardpack {
namespace {

class ObjectStoreOutputEnv final : public StoreOutputEnv {
 public:
  ObjectStoreOutputEnv(std::string out, Env* base, ObjectStoreOutputOptions options, S3Location location,
                       HttpOptions http_options, std::string staging)
      : out_(std::move(out)),
        base_(base),
        options_(std::move(options)),
        location_(std::move(location)),
        http_options_(http_options),
        staging_(std::move(staging)),
        http_(NewHttpClient()) {
    for (int i = 0; i < std::max(1, options_.uploads); ++i) threads_.emplace_back([this] { UploadLoop(); });
  }

  ~ObjectStoreOutputEnv() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    // What was never uploaded (the pack failed first), the writers' leftovers, then the folder.
    std::vector<DirEntry> entries;
    if (base_->ListDir(staging_, &entries).ok()) {
      for (const DirEntry& e : entries) (void)base_->RemoveFile(JoinPath(staging_, e.name));
    }
    ::rmdir(staging_.c_str());
  }

  // Whether this Env's output folder is `out` (as a user may write it, with a trailing slash).
  bool serves(const std::string& given) const override {
    std::string out = given;
    while (out.size() > 5 && out.back() == '/') out.pop_back();
    return out == out_;
  }

  // Lists OUT in the store: what exists there before this run wrote anything.
  Status ListStore() {
    S3Listing listing;
    S3ObjectStore store(location_, http_.get());
    SHARDPACK_RETURN_IF_ERROR(store.List(&listing));
    remote_ = std::move(listing.files);
    remote_folders_ = std::move(listing.folders);
    return Status::OK();
  }

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    std::string name;
    return Inside(path, &name) ? base_->NewWritableFile(Local(name), file) : base_->NewWritableFile(path, file);
  }
  Status NewUnbufferedWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    std::string name;
    return Inside(path, &name) ? base_->NewUnbufferedWritableFile(Local(name), file)
                               : base_->NewUnbufferedWritableFile(path, file);
  }

  // Files of OUT are read while they are still local (before their upload); a published file is not
  // read back from the store, except small ones whole (ReadFile).
  Status NewSequentialFile(const std::string& path, std::unique_ptr<SequentialFile>* file) override {
    std::string name, local;
    if (!Inside(path, &name)) return base_->NewSequentialFile(path, file);
    if (!LocalCopy(name, &local)) return NotLocal(path);
    return base_->NewSequentialFile(local, file);
  }
  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override {
    std::string name, local;
    if (!Inside(path, &name)) return base_->NewRandomAccessFile(path, file);
    if (!LocalCopy(name, &local)) return NotLocal(path);
    return base_->NewRandomAccessFile(local, file);
  }

  Status ReadFile(const std::string& path, uint64_t max_bytes, std::string* contents) override {
    std::string name, local;
    if (!Inside(path, &name)) return base_->ReadFile(path, max_bytes, contents);
    if (LocalCopy(name, &local)) {
      const Status s = base_->ReadFile(local, max_bytes, contents);
      // An uploader may have removed the staged copy since: then the store has it.
      if (s.code() != Status::Code::kNotFound || !InStore(name)) return s;
    }
    if (!InStore(name)) return Status::NotFound(path + " does not exist");
    std::lock_guard<std::mutex> lock(http_mu_);
    S3ObjectStore store(location_, http_.get());
    return store.Get(name, max_bytes, contents);
  }

  Status ListDir(const std::string& path, std::vector<DirEntry>* entries) override {
    if (path != out_) {
      std::string name;
      if (Inside(path, &name)) return Status::Unsupported(path + ": only " + out_ + " itself is listed");
      return base_->ListDir(path, entries);
    }
    std::map<std::string, DirEntry::Type> names;
    std::vector<DirEntry> local;
    SHARDPACK_RETURN_IF_ERROR(base_->ListDir(staging_, &local));
    for (const DirEntry& e : local) {
      if (e.name.rfind(kUploadPrefix, 0) != 0) names[e.name] = e.type;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [name, file] : pending_) names[name] = DirEntry::Type::kFile;
      for (const auto& [name, size] : remote_) names[name] = DirEntry::Type::kFile;
      for (const std::string& folder : remote_folders_) names[folder] = DirEntry::Type::kDirectory;
    }
    entries->clear();
    for (const auto& [name, type] : names) entries->push_back({name, type, false});
    return Status::OK();
  }

  Status GetFileId(const std::string& path, FileId* id) override {
    std::string name;
    if (path == out_) return base_->GetFileId(staging_, id);
    return Inside(path, &name) ? base_->GetFileId(Local(name), id) : base_->GetFileId(path, id);
  }

  Status GetFileSize(const std::string& path, uint64_t* size) override {
    std::string name, local;
    if (!Inside(path, &name)) return base_->GetFileSize(path, size);
    if (LocalCopy(name, &local) && base_->GetFileSize(local, size).ok()) return Status::OK();
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = remote_.find(name);
    if (it == remote_.end()) return Status::NotFound(path + " does not exist");
    *size = it->second;
    return Status::OK();
  }

  Status GetStoredXxh64(const std::string& path, std::string* xxh64) override {
    std::string name;
    if (!Inside(path, &name)) return base_->GetStoredXxh64(path, xxh64);
    S3ObjectInfo info;
    {
      std::lock_guard<std::mutex> lock(http_mu_);
      S3ObjectStore store(location_, http_.get());
      SHARDPACK_RETURN_IF_ERROR(store.Head(name, &info));
    }
    if (!info.exists) return Status::NotFound(path + " does not exist");
    if (info.xxh64.empty()) {
      return Status::DataLoss(path + " carries no x-amz-meta-xxh64: it was not uploaded by shardpack");
    }
    *xxh64 = info.xxh64;
    return Status::OK();
  }

  bool FileExists(const std::string& path) override {
    std::string name, local;
    if (path == out_) return true;
    if (!Inside(path, &name)) return base_->FileExists(path);
    return LocalCopy(name, &local) || InStore(name);
  }

  Status CreateDirs(const std::string& path) override {
    std::string name;
    if (path == out_) return base_->CreateDirs(staging_);
    return Inside(path, &name) ? base_->CreateDirs(Local(name)) : base_->CreateDirs(path);
  }

  // A rename to a final name publishes the file (see the header).
  Status RenameFile(const std::string& from, const std::string& to) override {
    std::string from_name, to_name;
    const bool from_inside = Inside(from, &from_name), to_inside = Inside(to, &to_name);
    if (!from_inside && !to_inside) return base_->RenameFile(from, to);
    if (!from_inside || !to_inside) return Status::Unsupported("cannot move " + from + " to " + to);
    const UploadOrder order = options_.upload_order ? options_.upload_order(to_name) : UploadOrder::kAny;
    if (order == UploadOrder::kNotPublished) return base_->RenameFile(Local(from_name), Local(to_name));
    // A name of its own for the upload, so that a newer version published under the same name
    // (a journal) never replaces the bytes being uploaded.
    const std::string staged = JoinPath(staging_, kUploadPrefix + std::to_string(next_upload_++) + "-" + to_name);
    if (order == UploadOrder::kLast) return UploadLast(Local(from_name), to_name, staged);
    SHARDPACK_RETURN_IF_ERROR(ReserveRoom());
    const Status s = base_->RenameFile(Local(from_name), staged);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      --reserved_;
      cv_.notify_all();
      return s;
    }
    return Enqueue(to_name, staged, order);
  }

  Status RemoveFile(const std::string& path) override {
    std::string name;
    if (!Inside(path, &name)) return base_->RemoveFile(path);
    bool existed = false;
    if (base_->FileExists(Local(name))) {
      SHARDPACK_RETURN_IF_ERROR(base_->RemoveFile(Local(name)));
      existed = true;
    }
    std::unique_lock<std::mutex> lock(mu_);
    // A removed file must not come back with an upload still under way.
    cv_.wait(lock, [&] { return !pending_.count(name) || !error_.ok(); });
    if (!remote_.count(name)) return existed ? Status::OK() : Status::NotFound(path + " does not exist");
    lock.unlock();
    {
      std::lock_guard<std::mutex> http_lock(http_mu_);
      S3ObjectStore store(location_, http_.get());
      SHARDPACK_RETURN_IF_ERROR(store.Delete(name));
    }
    lock.lock();
    remote_.erase(name);
    return Status::OK();
  }

  // A killed run's multipart uploads (and those whose abort failed, or whose start was retried
  // after the store had begun one) are listed and aborted, for the names this run owns only: another
  // task's live upload into the same prefix is left alone.
  Status FreeUnfinishedWrites(const std::string& dir, const std::function<bool(const std::string&)>& owns) override {
    if (dir != out_) return base_->FreeUnfinishedWrites(dir, owns);
    std::lock_guard<std::mutex> http_lock(http_mu_);
    S3ObjectStore store(location_, http_.get());
    std::vector<std::pair<std::string, std::string>> uploads;
    SHARDPACK_RETURN_IF_ERROR(store.ListMultipartUploads(&uploads));
    for (const auto& [name, upload_id] : uploads) {
      if (!owns(name)) continue;
      SHARDPACK_RETURN_IF_ERROR(store.AbortMultipart(name, upload_id)
                                    .WithPrefix("freeing an unfinished upload of " + out_ + "/" + name + ": "));
    }
    return Status::OK();
  }

  // Uploads are durable once the store has answered; nothing to sync.
  Status SyncDir(const std::string& path) override {
    std::string name;
    return path == out_ || Inside(path, &name) ? Status::OK() : base_->SyncDir(path);
  }

 private:
  static constexpr char kUploadPrefix[] = ".upload-";

  struct Upload {
    uint64_t sequence;  // publication order
    std::string name;   // in the store, under PREFIX/
    std::string local;  // the staged file
    UploadOrder order;
  };

  // Whether `path` is a file in OUT, and its name there.
  bool Inside(const std::string& path, std::string* name) const {
    if (path.size() <= out_.size() + 1 || path.compare(0, out_.size(), out_) != 0 || path[out_.size()] != '/') {
      return false;
    }
    *name = path.substr(out_.size() + 1);
    return true;
  }

  std::string Local(const std::string& name) const { return JoinPath(staging_, name); }

  // The local file that holds `name` now: being written or renamed in the staging folder, or
  // published and waiting for its upload.
  bool LocalCopy(const std::string& name, std::string* local) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto it = pending_.find(name);
      if (it != pending_.end()) {
        *local = it->second;
        return true;
      }
    }
    *local = Local(name);
    return base_->FileExists(*local);
  }

  bool InStore(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return remote_.count(name) > 0;
  }

  Status NotLocal(const std::string& path) const {
    return Status::Unsupported(path + " is in the object store already; it is not read back while packing");
  }

  // Waits while `uploads` published files are queued, uploading or about to be queued (the bound on
  // local disk), then holds a place for one more; Enqueue takes it.
  Status ReserveRoom() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] {
      return queue_.size() + in_flight_.size() + reserved_ < size_t(std::max(1, options_.uploads)) || !error_.ok();
    });
    if (!error_.ok()) return error_;
    ++reserved_;
    return Status::OK();
  }

  // Queues a published file in the place ReserveRoom held. A newer journal replaces a queued one
  // that has not started.
  Status Enqueue(const std::string& name, const std::string& staged, UploadOrder order) {
    std::unique_lock<std::mutex> lock(mu_);
    --reserved_;
    if (!error_.ok()) {
      cv_.notify_all();
      lock.unlock();
      (void)base_->RemoveFile(staged);
      return error_;
    }
    if (order == UploadOrder::kAfterEarlier) {
      for (auto it = queue_.begin(); it != queue_.end(); ++it) {
        if (it->name == name) {
          (void)base_->RemoveFile(it->local);
          queue_.erase(it);
          break;
        }
      }
    }
    queue_.push_back({next_sequence_++, name, staged, order});
    pending_[name] = staged;
    cv_.notify_all();
    return Status::OK();
  }

  // The manifest: every upload finished, then this one, here. It is staged (moved from `from`)
  // only then, so that it never adds to the published files on local disk.
  Status UploadLast(const std::string& from, const std::string& name, const std::string& staged) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return (queue_.empty() && in_flight_.empty() && reserved_ == 0) || !error_.ok(); });
      if (!error_.ok()) {
        lock.unlock();
        (void)base_->RemoveFile(from);
        return error_;
      }
    }
    SHARDPACK_RETURN_IF_ERROR(base_->RenameFile(from, staged));
    uint64_t size = 0;
    Status s;
    {
      std::lock_guard<std::mutex> lock(http_mu_);
      s = UploadFile(http_.get(), name, staged, &size);
    }
    (void)base_->RemoveFile(staged);
    if (!s.ok()) return s;
    std::lock_guard<std::mutex> lock(mu_);
    remote_[name] = size;
    return Status::OK();
  }

  // The first queued upload that may start now: a journal only once nothing published before it
  // is still queued or uploading.
  std::deque<Upload>::iterator NextReady() {
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->order != UploadOrder::kAfterEarlier) return it;
      const bool earlier_busy = it != queue_.begin() || std::any_of(in_flight_.begin(), in_flight_.end(),
                                                                    [&](uint64_t seq) { return seq < it->sequence; });
      if (!earlier_busy) return it;
    }
    return queue_.end();
  }

  std::unique_ptr<HttpClient> NewHttpClient() const {
    return options_.new_http_client ? options_.new_http_client(http_options_) : NewCurlHttpClient(http_options_);
  }

  void UploadLoop() {
    std::unique_ptr<HttpClient> http = NewHttpClient();
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || (error_.ok() && NextReady() != queue_.end()); });
      if (stop_) return;
      const auto it = NextReady();
      const Upload upload = *it;
      queue_.erase(it);
      in_flight_.insert(upload.sequence);
      lock.unlock();
      uint64_t size = 0;
      const Status s =
          StatusOfCall("uploading a file", [&] { return UploadFile(http.get(), upload.name, upload.local, &size); });
      (void)base_->RemoveFile(upload.local);
      lock.lock();
      in_flight_.erase(upload.sequence);
      const auto p = pending_.find(upload.name);
      if (p != pending_.end() && p->second == upload.local) pending_.erase(p);
      if (s.ok()) {
        remote_[upload.name] = size;
      } else if (error_.ok()) {
        error_ = s;
      }
      cv_.notify_all();
    }
  }

  // Uploads the local file `local` as PREFIX/name, whole or in parts, with its XXH64 as metadata.
  Status UploadFile(HttpClient* http, const std::string& name, const std::string& local, uint64_t* size) {
    S3ObjectStore store(location_, http);
    const auto failed = [&](const Status& s) { return s.WithPrefix("uploading " + out_ + "/" + name + ": "); };
    SHARDPACK_RETURN_IF_ERROR(base_->GetFileSize(local, size));
    if (*size <= options_.part_size) {  // one PUT: the bytes are read once, hashed in memory
      std::string bytes;
      SHARDPACK_RETURN_IF_ERROR(base_->ReadFile(local, options_.part_size, &bytes));
      *size = bytes.size();
      const Status s = store.Put(name, bytes, ChecksumHex(Xxh64(bytes)));
      return s.ok() ? s : failed(s);
    }
    // The checksum goes with the multipart upload's start, so a large file is read twice.
    uint64_t xxh64 = 0;
    SHARDPACK_RETURN_IF_ERROR(ChecksumFile(base_, local, &xxh64, size));
    const std::string hex = ChecksumHex(xxh64);
    std::unique_ptr<RandomAccessFile> file;
    SHARDPACK_RETURN_IF_ERROR(base_->NewRandomAccessFile(local, &file));
    std::string upload_id;
    Status s = store.StartMultipart(name, hex, &upload_id);
    if (!s.ok()) return failed(s);
    std::vector<std::string> etags;
    std::string part;
    for (uint64_t offset = 0; offset < *size && s.ok(); offset += options_.part_size) {
      part.resize(std::min<uint64_t>(options_.part_size, *size - offset));
      s = file->Read(offset, part.size(), part.data());
      std::string etag;
      if (s.ok()) s = store.PutPart(name, upload_id, int(etags.size()) + 1, part, &etag);
      etags.push_back(etag);
    }
    if (s.ok()) s = store.CompleteMultipart(name, upload_id, etags);
    if (!s.ok()) {
      (void)store.AbortMultipart(name, upload_id);  // frees the stored parts; best effort
      return failed(s);
    }
    return Status::OK();
  }

  const std::string out_;
  Env* const base_;
  const ObjectStoreOutputOptions options_;
  const S3Location location_;
  const HttpOptions http_options_;
  const std::string staging_;
  std::mutex http_mu_;  // http_: calls from the pipeline's threads, one at a time
  std::unique_ptr<HttpClient> http_;
  std::atomic<uint64_t> next_upload_{0};

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, uint64_t> remote_;  // objects in the store: name -> size
  std::set<std::string> remote_folders_;
  std::deque<Upload> queue_;
  std::set<uint64_t> in_flight_;                // sequences being uploaded
  std::map<std::string, std::string> pending_;  // name -> its latest staged file, queued or uploading
  uint64_t next_sequence_ = 0;
  size_t reserved_ = 0;  // places ReserveRoom held for files not yet queued
  Status error_;         // the first upload that failed for good
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

Status CheckObjectStoreOutput(const std::string& out, const RemoteOptions::S3& settings, S3Location* location) {
  std::string root = out;
  while (root.size() > 5 && root.back() == '/') root.pop_back();
  SHARDPACK_RETURN_IF_ERROR(ParseS3Location(root, settings, location));
  if (location->prefix.empty()) {
    return Status::InvalidArgument(out + ": name a prefix for the dataset (s3://BUCKET/NAME), not a whole bucket");
  }
  return Status::OK();
}

Status NewObjectStoreOutputEnv(const std::string& out, Env* base, const ObjectStoreOutputOptions& options,
                               std::unique_ptr<Env>* env) {
  std::string root = out;
  while (root.size() > 5 && root.back() == '/') root.pop_back();
  S3Location location;
  SHARDPACK_RETURN_IF_ERROR(CheckObjectStoreOutput(out, options.s3, &location));
  SHARDPACK_RETURN_IF_ERROR(base->CreateDirs(options.staging_parent));
  std::string pattern = JoinPath(options.staging_parent, "shardpack-upload-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status::IOError("cannot make a staging folder in " + options.staging_parent +
                           " (set SHARDPACK_STAGING to a folder with room for a few shards)");
  }
  auto output = std::make_unique<ObjectStoreOutputEnv>(root, base, options, location, options.http, pattern);
  SHARDPACK_RETURN_IF_ERROR(output->ListStore());
  *env = std::move(output);
  return Status::OK();
}

}  // namespace shardpack
