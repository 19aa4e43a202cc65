// _shardpack.Dataset: dataset_bindings.h. Reads run without the GIL.
#include "dataset_bindings.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "numpy_arrays.h"
#include "python_errors.h"
#include "shardpack/dataset_reader.h"
#include "tools/environment.h"

namespace py = pybind11;
using shardpack_python::RowMajorArray;

namespace shardpack {
namespace {

class PyDataset {
 public:
  explicit PyDataset(const std::string& path) {
    RemoteOptions remote;
    Raise(ApplyEnvironment(&remote));
    Raise(DatasetReader::Open(path, nullptr, &reader_, remote));
  }
  uint64_t size() const { return reader_->size(); }
  std::string format() const { return std::string(DatasetFormatName(reader_->manifest().format)); }
  std::vector<std::string> classes() const { return reader_->manifest().classes; }

  // Sample i as a WebDataset-style dict: __key__, cls, the image bytes under their extension (or,
  // for raw datasets, the pixels under "npy"), each of its fields under its name (the file's bytes;
  // a mask raw keeps as pixels as an (H, W) array), and its metadata parsed under "json" (under
  // "meta.json" when the sample has a json field of its own, as in its wds shard). Shards of another
  // tool have no metadata of shardpack's: their json member is the sample's own field, given once,
  // as its bytes, as every other member is.
  py::dict Read(uint64_t index) const {
    ReadSample sample;
    std::string json;
    struct Field {
      std::string name, data;
      bool pixels = false;
    };
    std::vector<Field> fields;
    std::vector<std::string> names;
    Status s;
    {
      py::gil_scoped_release nogil;
      s = reader_->Read(index, &sample);
      if (s.ok()) s = reader_->ReadMetadata(index, &json);
      if (s.ok()) s = reader_->ReadFieldNames(index, &names);
      for (const std::string& name : names) {
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
      if (f.name == "json" && f.data == json) json.clear();  // the same member: no metadata of shardpack's
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
};

}  // namespace

void BindDataset(py::module_& m) {
  py::class_<PyDataset>(m, "Dataset")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("__len__", &PyDataset::size)
      .def_property_readonly("format", &PyDataset::format)
      .def_property_readonly("classes", &PyDataset::classes)
      .def("read", &PyDataset::Read, py::arg("index"));
}

}  // namespace shardpack
