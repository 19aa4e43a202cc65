// The loader in Python. Batches reach Python without a copy: a BatchLease owns one batch buffer of
// the loader until the last numpy array or torch tensor made from it is gone (their base object is
// the lease), and only then gives the buffer back, so a batch Python still holds is never
// overwritten. The GIL is released whenever the C++ side may wait or work (waiting for a batch,
// starting an epoch).
#include "loader_bindings.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loader_options.h"
#include "numpy_arrays.h"
#include "option_values.h"
#include "python_errors.h"
#include "shardpack/loader.h"

namespace py = pybind11;
using shardpack_python::ConvertedArray;
using shardpack_python::RowMajorArray;

namespace shardpack {
namespace {

// Batch buffers allocated by a Python callable (torch's pinned memory): the objects it returns are
// kept alive here until the loader frees the buffer.
struct PythonBuffers {
  py::object allocate;  // allocate(nbytes) -> object with data_ptr()
  std::vector<py::object> alive;
};

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
  uint64_t bucket_left_out() const { return loader_->bucket_left_out(); }
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

  const LoaderOptions& options() const { return options_; }

 private:
  LoaderOptions options_;
  std::shared_ptr<Loader> loader_;
};

}  // namespace

void BindLoader(py::module_& m) {
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
      .def_property_readonly(
          "width", [](const BatchLease& l) { return l.batch().width; }, "every image's width (its bucket's)")
      .def_property_readonly(
          "height", [](const BatchLease& l) { return l.batch().height; }, "every image's height (its bucket's)")
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
      .def("bucket_left_out", &PyLoader::bucket_left_out,
           "With bucket_no_upscale or bucket_min_side: the samples in no bucket, left out of every epoch")
      .def("dataset_fingerprint", &PyLoader::dataset_fingerprint,
           "What the loader reads, by content (its shards' checksums): resume states record it")
      .def("dataset_generation", &PyLoader::dataset_generation,
           "How many `shardpack append`s the dataset has had (0 for a mixture): resume states record it")
      .def("start_epoch", &PyLoader::StartEpoch, py::arg("epoch"), py::arg("first_batch") = 0,
           py::arg("samples_done") = 0)
      .def("samples_consumed", &PyLoader::samples_consumed, py::arg("rank_batches_done"))
      .def("acquire", &PyLoader::Acquire)
      .def("buffers", &PyLoader::Buffers, "Addresses of the batch buffers (for zero-copy checks)")
      .def("stats", &PyLoader::Stats)
      .def(
          "bucket_sizes",
          [](const PyLoader& l) {
            py::list sizes;
            for (const Bucket& b : l.options().buckets) sizes.append(py::make_tuple(b.width, b.height));
            return sizes;
          },
          "The buckets as (width, height), in the loader's order: batch.bucket indexes it");
}

}  // namespace shardpack
