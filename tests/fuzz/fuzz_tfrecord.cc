// Fuzz target: a TFRecord file's framing (lengths and CRCs that may claim anything) and each
// record's tf.train.Example (protobuf lengths, wire types and nesting from outside).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "formats/tfrecord/tf_example.h"
#include "formats/tfrecord/tfrecord_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The input as an Example itself (the framing's CRCs would keep most inputs from reaching it).
  std::map<std::string, shardpack::TfFeature> features;
  std::string why;
  (void)shardpack::ParseTfExample(bytes, &features, &why);
  // And as a file of records.
  shardpack::TfRecordReader reader(bytes, "fuzz");
  std::string_view record;
  std::string damaged;
  bool done = false;
  while (reader.Next(&record, &damaged, &done).ok() && !done) {
    if (damaged.empty()) (void)shardpack::ParseTfExample(record, &features, &why);
  }
  return 0;
}
