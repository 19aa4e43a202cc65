// _shardpack.CudaFeed, _shardpack.DeviceBatch: cuda_bindings.h.
#include "cuda_bindings.h"

#ifdef SHARDPACK_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "loader_options.h"
#include "numpy_arrays.h"
#include "python_errors.h"
#include "shardpack/cuda_feed.h"

namespace py = pybind11;
using shardpack_python::ConvertedArray;
using shardpack_python::RowMajorArray;

namespace shardpack {
namespace {

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

}  // namespace

void BindCuda(py::module_& m) {
  m.attr("has_cuda") = true;
  m.def("cuda_device_available", [] {
    std::string why;
    const bool ok = CudaDeviceAvailable(&why);
    return py::make_tuple(ok, why);
  });
  py::class_<DeviceBatchHandle>(m, "DeviceBatch", "A batch in GPU memory; torch.from_dlpack(batch) makes the tensor.")
      .def("__dlpack__", &DeviceBatchHandle::Dlpack, py::arg("stream") = py::none())
      .def("__dlpack_device__", &DeviceBatchHandle::DlpackDevice)
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
}

}  // namespace shardpack

#else  // !SHARDPACK_HAVE_CUDA

namespace shardpack {

void BindCuda(pybind11::module_& m) { m.attr("has_cuda") = false; }

}  // namespace shardpack

#endif  // SHARDPACK_HAVE_CUDA
