// The writing half of the Python package: shardpack.Writer (python/shardpack/writer.py) over
// SampleWriter, and shardpack.pack() over Pack(). The work runs without the GIL: Write() holds it
// only to copy the sample out of Python's objects, and blocks on the writer's queue without it.
#include "writer_bindings.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>

#include "ground/opencv_imdecode.h"
#include "option_values.h"
#include "shardpack/pack.h"
#include "shardpack/writer.h"
#include "tools/environment.h"
#include "tools/report_json.h"

namespace py = pybind11;

namespace shardpack {
namespace {

[[noreturn]] void RaiseStatus(const Status& s) {
  const std::string message = InPythonWords(s.message());
  if (s.code() == Status::Code::kInvalidArgument) throw py::value_error(message);
  if (s.code() == Status::Code::kNotFound) throw py::value_error(message);
  throw std::runtime_error(message);
}

std::string Text(py::handle v) { return py::str(v).cast<std::string>(); }

// pack's options from keywords named as in the CLI (--shard-size: shard_size). A keyword this table
// does not know is a TypeError naming it. `for_writer`: the ones a writer refuses are not offered.
PackOptions PackOptionsFrom(const py::dict& kwargs, bool for_writer) {
  using Set = void (*)(PackOptions&, py::handle);
  static const std::map<std::string, Set> kCommon = {
      {"format",
       [](PackOptions& o, py::handle v) {
         const Status s = ParseDatasetFormat(Text(v), &o.format);
         if (!s.ok()) throw py::value_error(s.message());
       }},
      {"prefix", [](PackOptions& o, py::handle v) { o.prefix = Text(v); }},
      {"shard_size", [](PackOptions& o, py::handle v) { o.shard_size_bytes = SizeOptionValue("shard_size", v); }},
      {"samples_per_shard",
       [](PackOptions& o, py::handle v) {
         o.samples_per_shard = OptionValue<uint64_t>("samples_per_shard", v, kCount);
       }},
      {"threads", [](PackOptions& o, py::handle v) { o.threads = OptionValue<int>("threads", v, kInt); }},
      {"strict", [](PackOptions& o, py::handle v) { o.strict = OptionValue<bool>("strict", v, kBool); }},
      {"check",
       [](PackOptions& o, py::handle v) {
         const std::string c = Text(v);
         if (c != "header" && c != "decode")
           throw py::value_error("check must be 'header' or 'decode', not '" + c + "'");
         o.decode_check = c == "decode";
       }},
      {"max_sample_bytes",
       [](PackOptions& o, py::handle v) { o.max_sample_bytes = SizeOptionValue("max_sample_bytes", v); }},
      {"max_pixels",
       [](PackOptions& o, py::handle v) { o.max_pixels = OptionValue<uint64_t>("max_pixels", v, kCount); }},
      {"resize", [](PackOptions& o, py::handle v) { o.resize = OptionValue<uint32_t>("resize", v, kCount); }},
      {"crop",
       [](PackOptions& o, py::handle v) {
         if (py::isinstance<py::int_>(v)) {
           o.crop_height = o.crop_width = OptionValue<uint32_t>("crop", v, kCount);
         } else {
           std::tie(o.crop_height, o.crop_width) = OptionValue<std::pair<uint32_t, uint32_t>>("crop", v, kSides);
         }
       }},
      {"keep_size", [](PackOptions& o, py::handle v) { o.keep_size = OptionValue<bool>("keep_size", v, kBool); }},
      {"compress",
       [](PackOptions& o, py::handle v) {
         const Status s = ParseRawCompression(v.is_none() ? "none" : Text(v), &o.compress);
         if (!s.ok()) throw py::value_error(s.message());
       }},
      {"chunk_samples",
       [](PackOptions& o, py::handle v) { o.chunk_samples = OptionValue<uint32_t>("chunk_samples", v, kCount); }},
      {"max_side", [](PackOptions& o, py::handle v) { o.max_side = OptionValue<uint32_t>("max_side", v, kCount); }},
      {"max_side_of",
       [](PackOptions& o, py::handle v) {
         const std::string of = Text(v);
         if (of != "long" && of != "short") throw py::value_error("max_side_of must be 'long' or 'short'");
         o.max_side_of_short = of == "short";
       }},
      {"jpeg_quality",
       [](PackOptions& o, py::handle v) { o.jpeg_quality = OptionValue<int>("jpeg_quality", v, kInt); }},
      {"lossless_as_jpeg",
       [](PackOptions& o, py::handle v) { o.lossless_as_jpeg = OptionValue<bool>("lossless_as_jpeg", v, kBool); }},
      {"sync", [](PackOptions& o, py::handle v) { o.sync = OptionValue<bool>("sync", v, kBool); }},
      {"force", [](PackOptions& o, py::handle v) { o.force = OptionValue<bool>("force", v, kBool); }},
  };
  static const std::map<std::string, Set> kPackOnly = {
      {"list", [](PackOptions& o, py::handle v) { o.list_file = v.is_none() ? "" : Text(v); }},
      {"layout",
       [](PackOptions& o, py::handle v) {
         const std::string l = Text(v);
         if (l != "imagenet" && l != "samples") throw py::value_error("layout must be 'imagenet' or 'samples'");
         o.layout = l == "samples" ? SourceLayout::kSamples : SourceLayout::kImageNet;
       }},
      {"shuffle", [](PackOptions& o, py::handle v) { o.shuffle = OptionValue<bool>("shuffle", v, kBool); }},
      {"seed", [](PackOptions& o, py::handle v) { o.seed = OptionValue<uint64_t>("seed", v, kCount); }},
      {"keys",
       [](PackOptions& o, py::handle v) {
         const std::string k = Text(v);
         if (k != "index" && k != "path") throw py::value_error("keys must be 'index' or 'path'");
         o.path_keys = k == "path";
       }},
      {"resume", [](PackOptions& o, py::handle v) { o.resume = OptionValue<bool>("resume", v, kBool); }},
  };
  PackOptions o;
  for (const auto& item : kwargs) {
    const std::string key = Text(item.first);
    auto setter = kCommon.find(key);
    if (setter == kCommon.end()) {
      if (for_writer || (setter = kPackOnly.find(key)) == kPackOnly.end()) {
        throw py::type_error(std::string(for_writer ? "unknown writer option '" : "unknown pack option '") + key + "'");
      }
    }
    setter->second(o, item.second);
  }
  if (const Status env = ApplyEnvironment(&o.remote); !env.ok())
    RaiseStatus(env);  // an s3:// OUT's credentials and endpoint, as the CLI reads them
  return o;
}

py::dict JsonToDict(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump()).cast<py::dict>();
}

// One shardpack.Writer's C++ side. Python's writer.py turns images, labels and fields into the
// plain arguments of write_bytes / write_pixels.
class PyWriter {
 public:
  PyWriter(const std::string& out, const py::dict& kwargs) : out_(out) {
    WriterOptions options;
    py::dict pack;
    for (const auto& item : kwargs) {
      const std::string key = Text(item.first);
      if (key == "classes") {
        options.classes = item.second.is_none() ? std::vector<std::string>()
                                                : OptionValue<std::vector<std::string>>("classes", item.second, kNames);
      } else if (key == "pixels") {
        const std::string p = Text(item.second);
        if (p != "png" && p != "jpeg") throw py::value_error("pixels must be 'png' or 'jpeg', not '" + p + "'");
        options.pixels_as_jpeg = p == "jpeg";
      } else if (key == "queue_samples") {
        options.queue_samples = OptionValue<size_t>("queue_samples", item.second, kCount);
      } else if (key == "queue_bytes") {
        options.queue_bytes = SizeOptionValue("queue_bytes", item.second);
      } else if (key == "part") {
        options.part = OptionValue<uint32_t>("part", item.second, kCount);
      } else if (key == "parts") {
        options.parts = OptionValue<uint32_t>("parts", item.second, kCount);
      } else if (key == "append") {
        options.append = OptionValue<bool>("append", item.second, kBool);
      } else {
        pack[item.first] = item.second;
      }
    }
    options.pack = PackOptionsFrom(pack, /*for_writer=*/true);
    std::unique_ptr<SampleWriter> writer;
    Status s;
    {
      py::gil_scoped_release nogil;
      s = SampleWriter::Open(out, options, &writer);
    }
    if (!s.ok()) RaiseStatus(s);
    writer_ = std::move(writer);
  }

  void WriteBytes(py::bytes image, const std::string& key, int32_t label, const std::string& class_name,
                  const std::string& path, const std::vector<std::pair<std::string, py::bytes>>& fields) {
    WriterSample sample = Identity(key, label, class_name, path, fields);
    const std::shared_ptr<SampleWriter> writer = Current();
    char* data = nullptr;
    Py_ssize_t size = 0;
    PyBytes_AsStringAndSize(image.ptr(), &data, &size);
    sample.image = writer->RecycledBuffer(size_t(size));  // the one copy out of Python's object, into used memory
    sample.image.assign(data, size_t(size));
    Push(writer, std::move(sample));
  }

  void WritePixels(py::array_t<uint8_t, py::array::c_style | py::array::forcecast> pixels, const std::string& key,
                   int32_t label, const std::string& class_name, const std::string& path,
                   const std::vector<std::pair<std::string, py::bytes>>& fields) {
    if (pixels.ndim() != 3 || pixels.shape(2) != 3) {
      throw py::value_error("pixels must be a uint8 array of shape (height, width, 3), RGB");
    }
    WriterSample sample = Identity(key, label, class_name, path, fields);
    sample.pixels.height = uint32_t(pixels.shape(0));
    sample.pixels.width = uint32_t(pixels.shape(1));
    sample.pixels.rgb.assign(pixels.data(), pixels.data() + pixels.size());
    Push(Current(), std::move(sample));
  }

  py::dict Close() {
    if (!writer_) throw py::value_error("the writer is closed already");
    // Taken out under the GIL, so that exactly one thread closes; threads still in write() keep the
    // writer alive through their own references and get "closed" from it.
    const std::shared_ptr<SampleWriter> writer = std::move(writer_);  // leaves writer_ empty
    PackResult result;
    Status s;
    {
      py::gil_scoped_release nogil;
      s = writer->Close(&result);
    }
    written_at_close_ = writer->samples_queued();
    if (!s.ok()) RaiseStatus(s);
    return JsonToDict(PackResultToJson(result, out_));
  }

  void Abort() {
    if (!writer_) return;
    const std::shared_ptr<SampleWriter> writer = std::move(writer_);
    {
      py::gil_scoped_release nogil;
      writer->Abort();
    }
    written_at_close_ = writer->samples_queued();
  }

  uint64_t written() const { return writer_ ? writer_->samples_queued() : written_at_close_; }

 private:
  static WriterSample Identity(const std::string& key, int32_t label, const std::string& class_name,
                               const std::string& path, const std::vector<std::pair<std::string, py::bytes>>& fields) {
    WriterSample sample;
    sample.key = key;
    sample.label = label;
    sample.class_name = class_name;
    sample.relpath = path;
    for (const auto& [name, data] : fields) {
      if (!sample.fields.emplace(name, std::string(data)).second) {
        throw py::value_error("field '" + name + "' is given twice");
      }
    }
    return sample;
  }

  // The open writer, as a reference of the calling thread's own (taken with the GIL held).
  std::shared_ptr<SampleWriter> Current() const {
    if (!writer_) throw py::value_error("the writer is closed: write before close()");
    return writer_;
  }

  // `writer` is the caller's own reference: while it blocks here without the GIL, another thread
  // may close or abort the writer (and drop writer_), which wakes it with that status instead of
  // destroying the queue it waits on.
  static void Push(const std::shared_ptr<SampleWriter>& writer, WriterSample sample) {
    Status s;
    {
      py::gil_scoped_release nogil;
      s = writer->Write(std::move(sample));
    }
    if (!s.ok()) RaiseStatus(s);
  }

  const std::string out_;
  // Shared with the threads inside write(): the last of them, or close(), frees it.
  std::shared_ptr<SampleWriter> writer_;
  uint64_t written_at_close_ = 0;
};

// shardpack.pack(): Pack() with progress handed to `progress` (a callable, called with a dict about
// every 100 ms from the pack's thread, holding the GIL) and the summary as pack --json gives it.
// An exception in `progress` stops the pack as Ctrl-C does (no manifest), and is raised here.
py::dict PackFromPython(const std::string& src, const std::string& out, py::object progress, const py::kwargs& kwargs) {
  PackOptions options = PackOptionsFrom(kwargs, /*for_writer=*/false);
  std::atomic<bool> stop{false};
  std::exception_ptr raised;  // by `progress`; set once, before `stop`
  options.cancel = &stop;
  if (!progress.is_none()) {
    options.on_progress = [&progress, &stop, &raised](const PackProgress& p) {
      if (stop.load()) return;
      py::gil_scoped_acquire gil;
      try {
        progress(py::dict(py::arg("files_done") = p.files_done, py::arg("files_total") = p.files_total,
                          py::arg("samples_packed") = p.samples_packed, py::arg("files_skipped") = p.files_skipped,
                          py::arg("bytes_read") = p.bytes_read, py::arg("elapsed_seconds") = p.elapsed_seconds));
      } catch (...) {
        raised = std::current_exception();
        stop.store(true);
      }
    };
  }
  PackResult result;
  Status s;
  {
    py::gil_scoped_release nogil;
    s = Pack(src, out, options, &result);
  }
  if (raised) std::rethrow_exception(raised);
  if (!s.ok()) RaiseStatus(s);
  return JsonToDict(PackResultToJson(result, out));
}

// A mask (a 2-D uint8 array) as PNG, for a field such as "seg.png".
py::bytes EncodeMaskPng(py::array_t<uint8_t, py::array::c_style | py::array::forcecast> mask) {
  if (mask.ndim() != 2) throw py::value_error("a mask must be a uint8 array of shape (height, width)");
  const cv::Mat grey(int(mask.shape(0)), int(mask.shape(1)), CV_8UC1, const_cast<uint8_t*>(mask.data()));
  std::vector<uint8_t> png;
  Status s;
  {
    py::gil_scoped_release nogil;
    s = OpenCvImEncode(".png", grey, {}, &png);
  }
  if (!s.ok()) RaiseStatus(s);
  return py::bytes(reinterpret_cast<const char*>(png.data()), png.size());
}

}  // namespace

void BindWriting(py::module_& m) {
  py::class_<PyWriter>(m, "_Writer")
      .def(py::init<const std::string&, const py::dict&>(), py::arg("out"), py::arg("options"))
      .def("write_bytes", &PyWriter::WriteBytes, py::arg("image"), py::arg("key"), py::arg("label"),
           py::arg("class_name"), py::arg("path"), py::arg("fields"))
      .def("write_pixels", &PyWriter::WritePixels, py::arg("pixels"), py::arg("key"), py::arg("label"),
           py::arg("class_name"), py::arg("path"), py::arg("fields"))
      .def("close", &PyWriter::Close)
      .def("abort", &PyWriter::Abort)
      .def_property_readonly("written", &PyWriter::written);
  m.def("_pack", &PackFromPython, py::arg("src"), py::arg("out"), py::arg("progress"));
  m.def("_encode_mask_png", &EncodeMaskPng, py::arg("mask"));
}

}  // namespace shardpack
