#include "formats/wds/tar_shard_reader.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

namespace shardpack {

struct TarShardReader::Impl {
  std::string path;
  std::unique_ptr<SequentialFile> file;
  // Reads start at 64 KiB and double while they come back full, up to 1 MiB: a large shard is read
  // in large pieces after a few reads, and opening a small file (an index's check, a fuzz input)
  // does not allocate, and touch, a megabyte. Not zeroed: Read fills what is used.
  static constexpr size_t kFirstRead = 64 << 10, kLargestRead = 1 << 20;
  std::unique_ptr<char[]> buffer;
  size_t buffer_size = 0;
  bool last_read_full = false;
  Status io_status;  // the Env's error, which libarchive only sees as "read failed"
  struct archive* a = nullptr;
  uint64_t current_size = 0;

  ~Impl() {
    if (a) archive_read_free(a);
  }

  static la_ssize_t ReadCallback(struct archive*, void* self, const void** out) {
    auto* impl = static_cast<Impl*>(self);
    // libarchive needs a block only until it asks for the next one: the buffer may be replaced here.
    if (impl->buffer_size == 0 || (impl->last_read_full && impl->buffer_size < kLargestRead)) {
      impl->buffer_size = impl->buffer_size == 0 ? kFirstRead : impl->buffer_size * 2;
      impl->buffer.reset(new char[impl->buffer_size]);
    }
    size_t n = 0;
    impl->io_status = impl->file->Read(impl->buffer_size, impl->buffer.get(), &n);
    if (!impl->io_status.ok()) return -1;
    impl->last_read_full = n == impl->buffer_size;
    *out = impl->buffer.get();
    return static_cast<la_ssize_t>(n);
  }

  static la_int64_t SkipCallback(struct archive*, void* self, la_int64_t request) {
    auto* impl = static_cast<Impl*>(self);
    impl->io_status = impl->file->Skip(static_cast<uint64_t>(request));
    return impl->io_status.ok() ? request : ARCHIVE_FATAL;
  }

  // Opens `path` through `env` as libarchive's input, every compression filter on, reading the
  // tar format, or with `raw` the whole stream after the filters as one entry. `what`: the failure's
  // words ("cannot open as a tar archive").
  static Status Start(Env* env, const std::string& path, bool raw, const char* what, std::unique_ptr<Impl>* out) {
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    SHARDPACK_RETURN_IF_ERROR(env->NewSequentialFile(path, &impl->file));
    impl->a = archive_read_new();
    if (raw) {
      archive_read_support_format_raw(impl->a);
    } else {
      archive_read_support_format_tar(impl->a);
    }
    archive_read_support_filter_all(impl->a);
    archive_read_set_callback_data(impl->a, impl.get());
    archive_read_set_read_callback(impl->a, &Impl::ReadCallback);
    archive_read_set_skip_callback(impl->a, &Impl::SkipCallback);
    if (archive_read_open1(impl->a) != ARCHIVE_OK) return impl->Error(what);
    *out = std::move(impl);
    return Status::OK();
  }

  Status Error(const std::string& what) const {
    if (!io_status.ok()) return io_status;
    const char* reason = archive_error_string(a);
    return Status::DataLoss(path + ": " + what + ": " + (reason ? reason : "unknown tar error"));
  }
};

TarShardReader::TarShardReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TarShardReader::~TarShardReader() = default;

Status TarShardReader::Open(Env* env, const std::string& path, std::unique_ptr<TarShardReader>* reader) {
  std::unique_ptr<Impl> impl;
  SHARDPACK_RETURN_IF_ERROR(Impl::Start(env, path, /*raw=*/false, "cannot open as a tar archive", &impl));
  reader->reset(new TarShardReader(std::move(impl)));
  return Status::OK();
}

Status TarShardReader::Next(TarMember* member, bool* done) {
  struct archive_entry* entry = nullptr;
  int rc = archive_read_next_header(impl_->a, &entry);
  *done = false;
  if (rc == ARCHIVE_EOF) {
    *done = true;
    return Status::OK();
  }
  if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) return impl_->Error("damaged tar header");
  const char* name = archive_entry_pathname(entry);
  member->name = name ? name : "";
  member->header_offset = static_cast<uint64_t>(archive_read_header_position(impl_->a));
  // What the tar reader has consumed so far: every header of this member (PAX, GNU long name), so
  // its data starts here.
  member->data_offset = static_cast<uint64_t>(archive_filter_bytes(impl_->a, 0));
  member->size = archive_entry_size_is_set(entry) ? static_cast<uint64_t>(archive_entry_size(entry)) : 0;
  member->regular = archive_entry_filetype(entry) == AE_IFREG && archive_entry_hardlink(entry) == nullptr;
  member->directory = archive_entry_filetype(entry) == AE_IFDIR;
  impl_->current_size = member->size;
  return Status::OK();
}

Status TarShardReader::Decompress(Env* env, const std::string& path, WritableFile* out) {
  std::unique_ptr<Impl> impl;
  SHARDPACK_RETURN_IF_ERROR(Impl::Start(env, path, /*raw=*/true, "cannot decompress", &impl));
  struct archive_entry* entry = nullptr;
  if (archive_read_next_header(impl->a, &entry) != ARCHIVE_OK) return impl->Error("cannot decompress");
  std::unique_ptr<char[]> block(new char[Impl::kLargestRead]);
  for (;;) {
    const la_ssize_t n = archive_read_data(impl->a, block.get(), Impl::kLargestRead);
    if (n < 0) return impl->Error("cannot decompress");
    if (n == 0) break;
    SHARDPACK_RETURN_IF_ERROR(out->Append(std::string_view(block.get(), size_t(n))));
  }
  return out->Close();
}

bool TarShardReader::compressed() const { return archive_filter_count(impl_->a) > 1; }

Status TarShardReader::ReadData(uint64_t max_bytes, std::string* data) {
  if (impl_->current_size > max_bytes) {
    return Status::InvalidArgument(impl_->path + ": member of " + std::to_string(impl_->current_size) +
                                   " bytes is larger than the limit of " + std::to_string(max_bytes));
  }
  data->resize(impl_->current_size);
  size_t got = 0;
  while (got < data->size()) {
    la_ssize_t r = archive_read_data(impl_->a, data->data() + got, data->size() - got);
    if (r < 0) return impl_->Error("cannot read member data");
    if (r == 0) return Status::DataLoss(impl_->path + ": member data ends early (truncated archive)");
    got += static_cast<size_t>(r);
  }
  return Status::OK();
}

}  // namespace shardpack
