// _shardpack: the Python binding of the C++ library (python/shardpack/ is the package users import).
//
// Batches reach Python without a copy: a BatchLease owns one batch buffer of the loader until the
// last numpy array or torch tensor made from it is gone (their base object is the lease), and only
// then gives the buffer back, so a batch Python still holds is never overwritten. The GIL is
// released whenever the C++ side may wait or work (waiting for a batch, starting an epoch, reading
// a sample, running a command).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "numpy_arrays.h"
#include "option_values.h"
#include "shardpack/dataset_reader.h"
#include "shardpack/loader.h"
#include "shardpack/sampler.h"
#include "tools/command_line.h"
#include "tools/environment.h"
#include "writer_bindings.h"
#ifdef SHARDPACK_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <dlpack/dlpack.h>

#include "shardpack/cuda_feed.h"
#endif

namespace py = pybind11;
using shardpack_python::ConvertedArray;
using shardpack_python::RowMajorArray;

namespace shardpack {
namespace {

// A non-OK Status as the Python exception a user expects.
void Raise(const Status& s) {
  if (s.ok()) return;
  const std::string message = InPythonWords(s.message());  // in the keywords of this interface
  switch (s.code()) {
    case Status::Code::kInvalidArgument:
      throw py::value_error(message);
    case Status::Code::kNotFound: {
      PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
      throw py::error_already_set();
    }
    case Status::Code::kIOError: {
      PyErr_SetString(PyExc_OSError, message.c_str());
      throw py::error_already_set();
    }
    default:
      throw std::runtime_error(InPythonWords(s.ToString()));
  }
}

// Batch buffers allocated by a Python callable (torch's pinned memory): the objects it returns are
// kept alive here until the loader frees the buffer.
struct PythonBuffers {
  py::object allocate;  // allocate(nbytes) -> object with data_ptr()
  std::vector<py::object> alive;
};

class PyLoader;

// `amount` per second of `elapsed`; 0 before anything ran. The rates both loaders' stats() derive.
double PerSecond(double amount, double elapsed) { return elapsed > 0 ? amount / elapsed : 0.0; }

// One batch on loan to Python.
class BatchLease {
 public:
  // h, w: the batch's image size (its bucket's, with buckets). patch > 0: the batch is a token
  // budget's patches (LoaderOptions::patch).
  BatchLease(std::shared_ptr<Loader> loader, const Batch* batch, uint32_t slot, bool nchw, uint32_t h, uint32_t w,
             uint32_t patch = 0)
      : loader_(std::move(loader)), batch_(batch), slot_(slot), nchw_(nchw), h_(h), w_(w), patch_(patch) {}
  ~BatchLease() { Release(); }
  BatchLease(const BatchLease&) = delete;
  BatchLease& operator=(const BatchLease&) = delete;

  void Release() {
    if (loader_) loader_->Release(slot_);
    loader_.reset();
    batch_ = nullptr;
  }
  const Batch& batch() const {
    if (batch_ == nullptr) throw py::value_error("this batch was released");
    return *batch_;
  }
  // The images as a uint8 array over the loader's buffer; `self` becomes its base.
  static py::array Images(py::object self) {
    BatchLease& l = self.cast<BatchLease&>();
    const Batch& b = l.batch();
    if (l.patch_ > 0) {  // (tokens, patch, patch, 3)
      const py::ssize_t p = l.patch_, tokens = py::ssize_t(b.token_offsets.empty() ? 0 : b.token_offsets.back());
      return RowMajorArray<uint8_t>({tokens, p, p, 3}, b.images, self);
    }
    std::vector<py::ssize_t> shape = {py::ssize_t(b.count)};
    if (l.nchw_)
      shape.insert(shape.end(), {3, py::ssize_t(l.h_), py::ssize_t(l.w_)});
    else
      shape.insert(shape.end(), {py::ssize_t(l.h_), py::ssize_t(l.w_), 3});
    return RowMajorArray<uint8_t>(shape, b.images, self);
  }
  // The masks (LoaderOptions::mask) as a (count, H, W) uint8 array over the loader's buffer.
  static py::object Masks(py::object self) {
    BatchLease& l = self.cast<BatchLease&>();
    const Batch& b = l.batch();
    if (b.masks == nullptr) return py::none();
    const std::vector<py::ssize_t> shape = {py::ssize_t(b.count), py::ssize_t(l.h_), py::ssize_t(l.w_)};
    return RowMajorArray<uint8_t>(shape, b.masks, self);
  }
  uint32_t slot() const { return slot_; }
  // A token budget's batch: each image's (height, width), and where its patches start (count + 1).
  py::array_t<int64_t> Sizes() const {
    const Batch& b = batch();
    return ConvertedArray<int64_t>(b.sizes, {py::ssize_t(b.sizes.size() / 2), py::ssize_t(2)});
  }
  py::array_t<int64_t> TokenOffsets() const {
    const Batch& b = batch();
    return ConvertedArray<int64_t>(b.token_offsets);
  }

 private:
  std::shared_ptr<Loader> loader_;
  const Batch* batch_;
  uint32_t slot_;
  bool nchw_;
  uint32_t h_, w_;
  uint32_t patch_;
};

class PyLoader {
 public:
  // `mixture`: several datasets (Loader::Open(Mixture)) instead of `path`.
  PyLoader(const std::string& path, const std::optional<Mixture>& mixture, const LoaderOptions& options,
           py::object allocate)
      : options_(options) {
    if (!allocate.is_none()) {
      auto buffers = std::make_shared<PythonBuffers>();
      buffers->allocate = allocate;
      options_.allocator.allocate = [buffers](size_t bytes) -> uint8_t* {
        py::gil_scoped_acquire gil;
        py::object buffer = buffers->allocate(bytes);
        buffers->alive.push_back(buffer);
        return reinterpret_cast<uint8_t*>(buffer.attr("data_ptr")().cast<uintptr_t>());
      };
      options_.allocator.free = [buffers](uint8_t* data, size_t) {
        py::gil_scoped_acquire gil;
        for (size_t i = 0; i < buffers->alive.size(); ++i) {
          if (buffers->alive[i].attr("data_ptr")().cast<uintptr_t>() == reinterpret_cast<uintptr_t>(data)) {
            buffers->alive.erase(buffers->alive.begin() + long(i));
            return;
          }
        }
      };
    }
    std::unique_ptr<Loader> loader;
    Status s;
    {
      py::gil_scoped_release nogil;
      s = mixture ? Loader::Open(*mixture, options_, &loader) : Loader::Open(path, options_, &loader);
    }
    Raise(s);
    loader_ = std::shared_ptr<Loader>(std::move(loader));
  }

  uint64_t batches_per_epoch() const { return loader_->batches_per_epoch(); }
  uint64_t batches_in_epoch(uint64_t epoch) const { return loader_->batches_in_epoch(epoch); }
  std::vector<std::string> warnings() const {
    std::vector<std::string> words;
    for (const std::string& w : loader_->warnings()) words.push_back(InPythonWords(w));
    return words;
  }
  std::vector<std::string> take_skip_reports() { return loader_->TakeSkipReports(); }
  std::string dataset_fingerprint() const { return loader_->DatasetFingerprint(); }
  std::string sample_groups_origin() const { return loader_->sample_groups_origin(); }
  uint64_t dataset_generation() const { return loader_->DatasetGeneration(); }
  uint64_t samples_consumed(uint64_t rank_batches_done) const { return loader_->SamplesConsumed(rank_batches_done); }

  void StartEpoch(uint64_t epoch, uint64_t first_batch, uint64_t samples_done) {
    Status s;
    {
      py::gil_scoped_release nogil;
      s = loader_->StartEpoch(epoch, first_batch, samples_done);
    }
    Raise(s);
  }

  // The next batch on loan, or None at the end of the epoch.
  py::object Acquire() {
    const Batch* batch = nullptr;
    uint32_t slot = 0;
    Status s;
    {
      py::gil_scoped_release nogil;
      s = loader_->Acquire(&batch, &slot);
    }
    Raise(s);
    if (batch == nullptr) return py::none();
    return py::cast(
        std::make_unique<BatchLease>(loader_, batch, slot, options_.nchw, batch->height, batch->width, options_.patch));
  }

  std::vector<uintptr_t> Buffers() const {
    std::vector<uintptr_t> out;
    for (const uint8_t* p : loader_->buffers()) out.push_back(reinterpret_cast<uintptr_t>(p));
    return out;
  }

  py::dict Stats() const {
    const LoaderStats s = loader_->stats();
    py::dict d;
    d["batches"] = s.batches;
    d["images"] = s.images;
    d["bytes_read"] = s.bytes_read;
    d["corrupt"] = s.corrupt;
    d["read_seconds"] = s.read_seconds;
    d["decode_seconds"] = s.decode_seconds;
    d["produce_seconds"] = s.produce_seconds;
    d["consumer_wait_seconds"] = s.consumer_wait_seconds;
    d["elapsed_seconds"] = s.elapsed_seconds;
    d["images_per_s"] = PerSecond(double(s.images), s.elapsed_seconds);
    d["bytes_per_s"] = PerSecond(double(s.bytes_read), s.elapsed_seconds);
    d["consumer_wait_share"] = PerSecond(s.consumer_wait_seconds, s.elapsed_seconds);
    return d;
  }

 private:
  LoaderOptions options_;
  std::shared_ptr<Loader> loader_;
};

class PyDataset {
 public:
  explicit PyDataset(const std::string& path) {
    RemoteOptions remote;
    Raise(ApplyEnvironment(&remote));
    Raise(DatasetReader::Open(path, nullptr, &reader_, remote));
    for (const auto& [name, count] : reader_->manifest().field_counts) field_names_.push_back(name);
  }
  uint64_t size() const { return reader_->size(); }
  std::string format() const { return std::string(DatasetFormatName(reader_->manifest().format)); }
  std::vector<std::string> classes() const { return reader_->manifest().classes; }

  // Sample i as a WebDataset-style dict: __key__, cls, the image bytes under their extension (or,
  // for raw datasets, the pixels under "npy"), each of its fields under its name (the file's bytes;
  // a mask raw keeps as pixels as an (H, W) array), and its metadata parsed under "json" (under
  // "meta.json" when the sample has a json field of its own, as in its wds shard).
  py::dict Read(uint64_t index) const {
    ReadSample sample;
    std::string json;
    struct Field {
      std::string name, data;
      bool pixels = false;
    };
    std::vector<Field> fields;
    Status s;
    {
      py::gil_scoped_release nogil;
      s = reader_->Read(index, &sample);
      if (s.ok()) s = reader_->ReadMetadata(index, &json);
      for (const std::string& name : field_names_) {
        Field f{name, "", false};
        bool present = false;
        if (s.ok()) s = reader_->ReadMaskPixels(index, name, &f.data, &present);
        f.pixels = present;
        if (s.ok() && !present) s = reader_->ReadField(index, name, &f.data, &present);
        if (present) fields.push_back(std::move(f));
      }
    }
    if (s.code() == Status::Code::kInvalidArgument) throw py::index_error(s.message());
    Raise(s);
    py::dict d;
    d["__key__"] = sample.key;
    d["cls"] = sample.label;
    if (!sample.encoded.empty()) {
      d[ImageExtension(sample.format)] = py::bytes(sample.encoded);
    } else {
      d["npy"] =
          RowMajorArray<uint8_t>({py::ssize_t(sample.pixels.height), py::ssize_t(sample.pixels.width), py::ssize_t(3)},
                                 sample.pixels.rgb.data());
    }
    bool own_json = false;
    for (const Field& f : fields) {
      own_json = own_json || f.name == "json";
      if (!f.pixels) {
        d[py::str(f.name)] = py::bytes(f.data);
        continue;
      }
      py::array_t<uint8_t> mask =
          RowMajorArray<uint8_t>({py::ssize_t(sample.pixels.height), py::ssize_t(sample.pixels.width)});
      std::memcpy(mask.mutable_data(), f.data.data(), f.data.size());
      d[py::str(f.name)] = mask;
    }
    if (!json.empty()) {
      d[own_json ? "meta.json" : "json"] = py::module_::import("json").attr("loads")(py::str(json));
    }
    return d;
  }

 private:
  std::unique_ptr<DatasetReader> reader_;
  std::vector<std::string> field_names_;  // the dataset's fields (the manifest's counts), looked up once
};

#ifdef SHARDPACK_HAVE_CUDA
// A batch in GPU memory, handed to torch through DLPack (torch.from_dlpack). __dlpack__(stream)
// makes the consumer's stream wait on the batch's copy; the device buffer is given back (Done on
// that stream) when torch frees the tensor.
class DeviceBatchHandle {
 public:
  DeviceBatchHandle(std::shared_ptr<CudaFeed> feed, const DeviceBatch* batch, int device, std::vector<int64_t> shape)
      : feed_(std::move(feed)), batch_(batch), device_(device), shape_(std::move(shape)) {}
  ~DeviceBatchHandle() {
    if (!exported_ && batch_ != nullptr) (void)feed_->Done(*batch_, nullptr);
  }

  py::tuple DlpackDevice() const { return py::make_tuple(int(kDLCUDA), device_); }

  py::capsule Dlpack(py::object stream) {
    if (exported_) throw py::value_error("this batch was already handed to a tensor");
    // DLPack's stream convention: None or 1 the legacy default stream, 2 the per-thread default.
    cudaStream_t s = nullptr;
    if (!stream.is_none()) {
      const auto v = stream.cast<intptr_t>();
      s = v == 2 ? cudaStreamPerThread : v <= 1 ? nullptr : reinterpret_cast<cudaStream_t>(v);
    }
    if (cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(batch_->ready), 0) != cudaSuccess) {
      throw std::runtime_error("CUDA: cannot make the consumer's stream wait for the batch");
    }
    auto* ctx = new Context{feed_, batch_, s, shape_};
    auto* t = new DLManagedTensor{};
    t->dl_tensor.data = const_cast<void*>(batch_->data);
    t->dl_tensor.device = DLDevice{kDLCUDA, device_};
    t->dl_tensor.ndim = int(ctx->shape.size());
    t->dl_tensor.shape = ctx->shape.data();
    t->dl_tensor.strides = nullptr;  // compact, row-major
    t->dl_tensor.byte_offset = 0;
    switch (batch_->dtype) {
      case DeviceDType::kUint8:
        t->dl_tensor.dtype = DLDataType{kDLUInt, 8, 1};
        break;
      case DeviceDType::kFloat32:
        t->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
        break;
      case DeviceDType::kFloat16:
        t->dl_tensor.dtype = DLDataType{kDLFloat, 16, 1};
        break;
      case DeviceDType::kBFloat16:
        t->dl_tensor.dtype = DLDataType{kDLBfloat, 16, 1};
        break;
    }
    t->manager_ctx = ctx;
    t->deleter = [](DLManagedTensor* self) {
      auto* c = static_cast<Context*>(self->manager_ctx);
      (void)c->feed->Done(*c->batch, c->stream);  // the tensor's work is queued on that stream
      delete c;
      delete self;
    };
    exported_ = true;
    // A capsule torch did not consume (still named "dltensor") frees the tensor itself.
    return py::capsule(t, "dltensor", [](PyObject* capsule) {
      if (PyCapsule_IsValid(capsule, "dltensor")) {
        auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
        if (m && m->deleter) m->deleter(m);
      }
    });
  }

  py::array_t<int64_t> Labels() const { return ConvertedArray<int64_t>(batch_->labels); }
  py::array_t<uint64_t> Indices() const {
    return RowMajorArray<uint64_t>({py::ssize_t(batch_->indices.size())}, batch_->indices.data());
  }

 private:
  struct Context {
    std::shared_ptr<CudaFeed> feed;
    const DeviceBatch* batch;
    cudaStream_t stream;
    std::vector<int64_t> shape;
  };
  std::shared_ptr<CudaFeed> feed_;
  const DeviceBatch* batch_;
  int device_;
  std::vector<int64_t> shape_;
  bool exported_ = false;
};

class PyCudaFeed {
 public:
  PyCudaFeed(const std::string& path, const LoaderOptions& loader, int device, int depth, const std::string& dtype,
             std::vector<float> mean, std::vector<float> std) {
    CudaFeedOptions o;
    o.loader = loader;
    o.device = device;
    o.depth = depth;
    o.dtype = dtype == "uint8"      ? DeviceDType::kUint8
              : dtype == "float16"  ? DeviceDType::kFloat16
              : dtype == "bfloat16" ? DeviceDType::kBFloat16
                                    : DeviceDType::kFloat32;
    for (int c = 0; c < 3; ++c) {
      o.mean[c] = mean.at(size_t(c));
      o.std[c] = std.at(size_t(c));
    }
    options_ = o;
    std::unique_ptr<CudaFeed> feed;
    Raise(CudaFeed::Open(path, o, &feed));
    feed_ = std::shared_ptr<CudaFeed>(std::move(feed));
  }
  uint64_t batches_per_epoch() const { return feed_->batches_per_epoch(); }
  void StartEpoch(uint64_t epoch, uint64_t first_batch) {
    Status s;
    {
      py::gil_scoped_release nogil;
      s = feed_->StartEpoch(epoch, first_batch);
    }
    Raise(s);
  }
  py::object Acquire() {
    const DeviceBatch* b = nullptr;
    Status s;
    {
      py::gil_scoped_release nogil;
      s = feed_->Next(&b);
    }
    Raise(s);
    if (b == nullptr) return py::none();
    const LoaderOptions& l = options_.loader;
    std::vector<int64_t> shape = {int64_t(b->count), 3, int64_t(l.height), int64_t(l.width)};
    if (options_.dtype == DeviceDType::kUint8 && !l.nchw)
      shape = {int64_t(b->count), int64_t(l.height), int64_t(l.width), 3};
    return py::cast(std::make_unique<DeviceBatchHandle>(feed_, b, options_.device, shape));
  }
  std::vector<std::string> take_skip_reports() { return feed_->TakeSkipReports(); }
  py::dict Stats() const {
    const CudaFeedStats s = feed_->stats();
    py::dict d;
    d["batches"] = s.batches;
    d["images"] = s.images;
    d["elapsed_seconds"] = s.elapsed_seconds;
    d["copy_seconds"] = s.copy_seconds;
    d["host_wait_seconds"] = s.host_wait_seconds;
    d["corrupt"] = s.corrupt;
    d["images_per_s"] = PerSecond(double(s.images), s.elapsed_seconds);
    d["consumer_wait_share"] = PerSecond(s.host_wait_seconds, s.elapsed_seconds);
    return d;
  }

 private:
  CudaFeedOptions options_;
  std::shared_ptr<CudaFeed> feed_;
};
#endif  // SHARDPACK_HAVE_CUDA

// A dataset URL's options (docs/remote.md): keys as RemoteOptions names them.
RemoteOptions RemoteOptionsFrom(const py::dict& remote) {
  RemoteOptions o;
  for (const auto& item : remote) {
    const std::string key = py::str(item.first);
    if (key == "cache_dir")
      o.cache_dir = item.second.is_none() ? "" : py::str(item.second).cast<std::string>();
    else if (key == "cache_limit")
      o.cache_limit = SizeOptionValue("cache_limit", item.second);
    else if (key == "prefetch_shards")
      o.prefetch_shards = OptionValue<uint32_t>("prefetch_shards", item.second, kCount);
    else if (key == "downloads")
      o.downloads = OptionValue<uint32_t>("downloads", item.second, kCount);
    else
      throw py::value_error("unknown remote option '" + key + "'");
  }
  return o;
}

// The loader's options from shardpack.Loader's keywords (python/shardpack/loader.py), in one place
// for the CPU loader and the CUDA feed. A keyword this table does not know is a TypeError naming it,
// so that a renamed option cannot be dropped silently. The environment's settings (SHARDPACK_CACHE
// when cache_dir is None, SHARDPACK_HTTP_*, AWS_*) are read here, at the edge (tools/environment.h).
LoaderOptions LoaderOptionsFrom(const py::kwargs& kwargs) {
  using Set = void (*)(LoaderOptions&, py::handle);
  static const std::map<std::string, Set> kSetters = {
      {"batch_size",
       [](LoaderOptions& o, py::handle v) { o.sampler.batch_size = OptionValue<uint64_t>("batch_size", v, kCount); }},
      {"shuffle", [](LoaderOptions& o, py::handle v) { o.sampler.shuffle = OptionValue<bool>("shuffle", v, kBool); }},
      {"seed", [](LoaderOptions& o, py::handle v) { o.sampler.seed = OptionValue<uint64_t>("seed", v, kCount); }},
      {"shuffle_buffer",
       [](LoaderOptions& o, py::handle v) {
         o.sampler.shuffle_buffer = OptionValue<uint64_t>("shuffle_buffer", v, kCount);
       }},
      {"drop_last",
       [](LoaderOptions& o, py::handle v) { o.sampler.drop_last = OptionValue<bool>("drop_last", v, kBool); }},
      {"rank", [](LoaderOptions& o, py::handle v) { o.sampler.rank = OptionValue<uint32_t>("rank", v, kCount); }},
      {"world_size",
       [](LoaderOptions& o, py::handle v) { o.sampler.world_size = OptionValue<uint32_t>("world_size", v, kCount); }},
      {"worker", [](LoaderOptions& o, py::handle v) { o.sampler.worker = OptionValue<uint32_t>("worker", v, kCount); }},
      {"num_workers",
       [](LoaderOptions& o, py::handle v) { o.sampler.num_workers = OptionValue<uint32_t>("num_workers", v, kCount); }},
      {"height", [](LoaderOptions& o, py::handle v) { o.height = OptionValue<uint32_t>("height", v, kCount); }},
      {"width", [](LoaderOptions& o, py::handle v) { o.width = OptionValue<uint32_t>("width", v, kCount); }},
      {"eval", [](LoaderOptions& o, py::handle v) { o.eval = OptionValue<bool>("eval", v, kBool); }},
      {"eval_resize",
       [](LoaderOptions& o, py::handle v) { o.eval_resize = OptionValue<uint32_t>("eval_resize", v, kCount); }},
      {"scale",
       [](LoaderOptions& o, py::handle v) {
         std::tie(o.scale_min, o.scale_max) = OptionValue<std::pair<double, double>>("scale", v, kPair);
       }},
      {"ratio",
       [](LoaderOptions& o, py::handle v) {
         std::tie(o.ratio_min, o.ratio_max) = OptionValue<std::pair<double, double>>("ratio", v, kPair);
       }},
      {"flip", [](LoaderOptions& o, py::handle v) { o.flip = OptionValue<double>("flip", v, kNumber); }},
      {"nchw", [](LoaderOptions& o, py::handle v) { o.nchw = OptionValue<bool>("nchw", v, kBool); }},
      {"threads", [](LoaderOptions& o, py::handle v) { o.threads = OptionValue<int>("threads", v, kInt); }},
      {"prefetch", [](LoaderOptions& o, py::handle v) { o.prefetch = OptionValue<uint32_t>("prefetch", v, kCount); }},
      {"skip_corrupt",
       [](LoaderOptions& o, py::handle v) { o.skip_corrupt = OptionValue<bool>("skip_corrupt", v, kBool); }},
      {"fast_decode",
       [](LoaderOptions& o, py::handle v) { o.fast_decode = OptionValue<bool>("fast_decode", v, kBool); }},
      {"fields",
       [](LoaderOptions& o, py::handle v) { o.fields = OptionValue<std::vector<std::string>>("fields", v, kNames); }},
      {"require_fields",
       [](LoaderOptions& o, py::handle v) { o.require_fields = OptionValue<bool>("require_fields", v, kBool); }},
      {"mask", [](LoaderOptions& o, py::handle v) { o.mask = OptionValue<std::string>("mask", v, kText); }},
      {"buckets",
       [](LoaderOptions& o, py::handle v) {
         Raise(ParseBuckets(OptionValue<std::string>("buckets", v, kText), "buckets", &o.buckets));
       }},
      {"patch", [](LoaderOptions& o, py::handle v) { o.patch = OptionValue<uint32_t>("patch", v, kCount); }},
      {"max_side", [](LoaderOptions& o, py::handle v) { o.max_side = OptionValue<uint32_t>("max_side", v, kCount); }},
      {"tokens_per_batch",
       [](LoaderOptions& o, py::handle v) {
         o.tokens_per_batch = OptionValue<uint64_t>("tokens_per_batch", v, kCount);
       }},
      {"bucket_tail",
       [](LoaderOptions& o, py::handle v) {
         Raise(ParseBucketTail(OptionValue<std::string>("bucket_tail", v, kText), "bucket_tail", &o.bucket_tail));
       }},
      {"remote", [](LoaderOptions& o, py::handle v) { o.remote = RemoteOptionsFrom(v.cast<py::dict>()); }},
  };
  LoaderOptions o;
  for (const auto& item : kwargs) {
    const std::string key = py::str(item.first);
    const auto setter = kSetters.find(key);
    if (setter == kSetters.end()) throw py::type_error("unknown loader option '" + key + "'");
    setter->second(o, item.second);
  }
  Raise(ApplyEnvironment(&o.remote));
  return o;
}

// A mixture from shardpack.Loader's `sources` (python/shardpack/loader.py checks and completes it):
// {"sources": [{"location", "weight", "samples", "passes"}], "epoch_size", "per_source_batches",
// "shared_classes"}.
Mixture MixtureFrom(const py::dict& d) {
  Mixture m;
  for (py::handle item : d["sources"].cast<py::list>()) {
    const py::dict source = item.cast<py::dict>();
    MixtureSource s;
    s.location = source["location"].cast<std::string>();
    s.weight = source["weight"].cast<double>();
    s.samples = source["samples"].cast<uint64_t>();
    s.passes = source["passes"].cast<double>();
    m.sources.push_back(s);
  }
  m.epoch_size = d["epoch_size"].cast<uint64_t>();
  m.per_source_batches = d["per_source_batches"].cast<bool>();
  m.shared_classes = d["shared_classes"].cast<bool>();
  return m;
}

int RunCli(const std::vector<std::string>& args) {
  std::vector<std::string> storage = {"shardpack"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  py::gil_scoped_release nogil;
  return RunCommandLine(int(storage.size()), argv.data());
}

}  // namespace
}  // namespace shardpack

PYBIND11_MODULE(_shardpack, m) {
  using namespace shardpack;
  m.doc() = "shardpack's C++ library; use the shardpack package (shardpack.Loader, shardpack.open).";
  m.attr("__version__") = SHARDPACK_VERSION;
  m.attr("ORDER_VERSION") = shardpack::kOrderVersion;  // shardpack/sampler.h: resume states record it
  BindWriting(m);

  py::class_<BatchLease>(m, "BatchLease", "One batch, its buffer on loan until no array uses it.")
      .def("images", &BatchLease::Images, "uint8 array over the batch buffer (no copy); keeps the lease alive")
      .def("masks", &BatchLease::Masks,
           "(count, H, W) uint8 class ids over the mask buffer (no copy), cropped and flipped as the images; "
           "None without a mask")
      .def("labels", [](const BatchLease& l) { return ConvertedArray<int64_t>(l.batch().labels); })
      .def("indices",
           [](const BatchLease& l) {
             return RowMajorArray<uint64_t>({py::ssize_t(l.batch().indices.size())}, l.batch().indices.data());
           })
      .def("keys", [](const BatchLease& l) { return l.batch().keys; })
      .def(
          "sources", [](const BatchLease& l) { return ConvertedArray<int64_t>(l.batch().sources); },
          "The source of each sample: its place in the loader's sources (0 for one dataset)")
      .def(
          "fields",
          [](const BatchLease& l) {
            // One list per requested field, aligned with the images: bytes, or None where absent.
            py::list columns;
            for (const std::vector<std::optional<std::string>>& column : l.batch().fields) {
              py::list values;
              for (const std::optional<std::string>& v : column) {
                values.append(v ? py::object(py::bytes(*v)) : py::object(py::none()));
              }
              columns.append(values);
            }
            return columns;
          },
          "The requested fields: one list per field, in the order asked, bytes or None per sample")
      .def_property_readonly("epoch", [](const BatchLease& l) { return l.batch().epoch; })
      .def_property_readonly("index", [](const BatchLease& l) { return l.batch().index; })
      .def_property_readonly(
          "bucket", [](const BatchLease& l) { return l.batch().bucket; },
          "with buckets: the batch's bucket, its place in the loader's list; else -1")
      .def("sizes", &BatchLease::Sizes, "with a token budget: (count, 2) int64, each image's height and width")
      .def("token_offsets", &BatchLease::TokenOffsets,
           "with a token budget: (count + 1,) int64, where each image's patches start; the last is the total")
      .def_property_readonly("count", [](const BatchLease& l) { return l.batch().count; })
      .def_property_readonly("slot", &BatchLease::slot)
      .def("release", &BatchLease::Release, "Give the buffer back now (arrays made from it must not be used after)");

  py::class_<PyLoader>(m, "Loader")
      .def(py::init([](const std::string& path, py::object allocate, py::object mixture, const py::kwargs& options) {
             std::optional<Mixture> m;
             if (!mixture.is_none()) m = MixtureFrom(mixture.cast<py::dict>());
             return std::make_unique<PyLoader>(path, m, LoaderOptionsFrom(options), allocate);
           }),
           py::arg("path"), py::arg("allocate") = py::none(), py::arg("mixture") = py::none())
      .def("batches_per_epoch", &PyLoader::batches_per_epoch)
      .def("batches_in_epoch", &PyLoader::batches_in_epoch, py::arg("epoch"))
      .def("warnings", &PyLoader::warnings)
      .def("take_skip_reports", &PyLoader::take_skip_reports,
           "One line per sample skipped as corrupt since the last call")
      .def("sample_groups_origin", &PyLoader::sample_groups_origin,
           "With buckets or a budget: 'read', 'made' or 'mapped' (the node's table in the cache folder)")
      .def("dataset_fingerprint", &PyLoader::dataset_fingerprint,
           "What the loader reads, by content (its shards' checksums): resume states record it")
      .def("dataset_generation", &PyLoader::dataset_generation,
           "How many `shardpack append`s the dataset has had (0 for a mixture): resume states record it")
      .def("start_epoch", &PyLoader::StartEpoch, py::arg("epoch"), py::arg("first_batch") = 0,
           py::arg("samples_done") = 0)
      .def("samples_consumed", &PyLoader::samples_consumed, py::arg("rank_batches_done"))
      .def("acquire", &PyLoader::Acquire)
      .def("buffers", &PyLoader::Buffers, "Addresses of the batch buffers (for zero-copy checks)")
      .def("stats", &PyLoader::Stats);

  py::class_<PyDataset>(m, "Dataset")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("__len__", &PyDataset::size)
      .def_property_readonly("format", &PyDataset::format)
      .def_property_readonly("classes", &PyDataset::classes)
      .def("read", &PyDataset::Read, py::arg("index"));

  m.def("cli", &RunCli, py::arg("args"),
        "Runs the shardpack command line with these arguments; returns its exit status");

#ifdef SHARDPACK_HAVE_CUDA
  m.attr("has_cuda") = true;
  m.def("cuda_device_available", [] {
    std::string why;
    const bool ok = CudaDeviceAvailable(&why);
    return py::make_tuple(ok, why);
  });
  py::class_<DeviceBatchHandle>(m, "DeviceBatch", "A batch in GPU memory; torch.from_dlpack(batch) makes the tensor.")
      .def("__dlpack__", &DeviceBatchHandle::Dlpack, py::arg("stream") = py::none())
      .def("__dlpack_device__", &DeviceBatchHandle::DlpackDevice)
      .def("masks", &BatchLease::Masks,
           "(count, H, W) uint8 class ids over the mask buffer (no copy), cropped and flipped as the images; "
           "None without a mask")
      .def("labels", &DeviceBatchHandle::Labels)
      .def("indices", &DeviceBatchHandle::Indices);
  py::class_<PyCudaFeed>(m, "CudaFeed")
      .def(py::init([](const std::string& path, int device, int depth, const std::string& dtype,
                       std::vector<float> mean, std::vector<float> std, const py::kwargs& options) {
             return std::make_unique<PyCudaFeed>(path, LoaderOptionsFrom(options), device, depth, dtype,
                                                 std::move(mean), std::move(std));
           }),
           py::arg("path"), py::arg("device"), py::arg("depth"), py::arg("dtype"), py::arg("mean"), py::arg("std"))
      .def("batches_per_epoch", &PyCudaFeed::batches_per_epoch)
      .def("start_epoch", &PyCudaFeed::StartEpoch, py::arg("epoch"), py::arg("first_batch") = 0)
      .def("acquire", &PyCudaFeed::Acquire)
      .def("stats", &PyCudaFeed::Stats)
      .def("take_skip_reports", &PyCudaFeed::take_skip_reports,
           "The samples skipped since the last call (LoaderOptions::skip_corrupt), one line each.");
#else
  m.attr("has_cuda") = false;
#endif
}
