// tf.train.Example, the message TFRecord image datasets hold (tensorflow/core/example/example.proto,
// feature.proto), parsed from its protobuf wire form by hand: three small messages, no generated
// code, and every length checked against what is left (the bytes come from outside).
//
//   Example  { Features features = 1; }
//   Features { map<string, Feature> feature = 1; }   (entries: key = 1, value = 2)
//   Feature  { oneof { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
//   BytesList { repeated bytes value = 1; }  FloatList { repeated float value = 1; }  (packed or not)
//   Int64List { repeated int64 value = 1; }
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shardpack {

struct TfFeature {
  enum class Kind { kNone, kBytes, kFloat, kInt64 };
  Kind kind = Kind::kNone;              // kNone: a Feature with none of the three set
  std::vector<std::string_view> bytes;  // views into the parsed data: an image is copied once, out of it
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

// Parses a serialized Example into *features (whose bytes views point into `data`) (by name; a name given twice keeps
// the last, as protobuf's map does). False with *why saying what is malformed (a length past the end, a wire type the
// messages do not use, a field of the wrong type); unknown fields are skipped.
bool ParseTfExample(std::string_view data, std::map<std::string, TfFeature>* features, std::string* why);

}  // namespace shardpack
