#include "formats/tfrecord/tf_example.h"

#include <cstring>

namespace shardpack {
namespace {

// One message's bytes, read field by field. Every read checks what is left; the first problem
// stops the parse with its reason in `why`.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}
  bool done() const { return at_ == data_.size(); }

  bool Varint(uint64_t* v, std::string* why) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == data_.size()) return Fail("a varint runs past the end", why);
      const uint8_t b = static_cast<uint8_t>(data_[at_++]);
      *v |= uint64_t(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return Fail("a varint is longer than 10 bytes", why);
  }
  // A field's tag: its number and wire type.
  bool Tag(uint32_t* field, uint32_t* wire, std::string* why) {
    uint64_t tag = 0;
    if (!Varint(&tag, why)) return false;
    *field = uint32_t(tag >> 3), *wire = uint32_t(tag & 7);
    return true;
  }
  bool Bytes(std::string_view* out, std::string* why) {
    uint64_t n = 0;
    if (!Varint(&n, why)) return false;
    if (n > data_.size() - at_) return Fail("a length of " + std::to_string(n) + " runs past the end", why);
    *out = data_.substr(at_, n);
    at_ += n;
    return true;
  }
  bool Fixed32(uint32_t* v, std::string* why) {
    if (data_.size() - at_ < 4) return Fail("a 32-bit value runs past the end", why);
    std::memcpy(v, data_.data() + at_, 4);  // little-endian, as x86-64 and aarch64 are
    at_ += 4;
    return true;
  }
  // Skips a field of wire type `wire` (unknown to these messages).
  bool Skip(uint32_t wire, std::string* why) {
    uint64_t v = 0;
    std::string_view bytes;
    uint32_t fixed = 0;
    switch (wire) {
      case 0:
        return Varint(&v, why);
      case 1:
        if (data_.size() - at_ < 8) return Fail("a 64-bit value runs past the end", why);
        at_ += 8;
        return true;
      case 2:
        return Bytes(&bytes, why);
      case 5:
        return Fixed32(&fixed, why);
      default:
        return Fail("wire type " + std::to_string(wire) + " (groups) is not used by tf.train.Example", why);
    }
  }

 private:
  static bool Fail(const std::string& what, std::string* why) {
    *why = what;
    return false;
  }
  std::string_view data_;
  size_t at_ = 0;
};

bool WrongType(const char* what, std::string* why) {
  *why = std::string(what) + " has the wrong wire type";
  return false;
}

// Reads `data` field by field: on_field(field, wire, reader) for each, which reads the field's value
// (reader.Skip for a field it does not know) and returns false at a problem (*why says it).
template <typename OnField>
bool ForEachField(std::string_view data, std::string* why, OnField on_field) {
  WireReader r(data);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    if (!r.Tag(&field, &wire, why) || !on_field(field, wire, r)) return false;
  }
  return true;
}

bool ParseBytesList(std::string_view data, TfFeature* f, std::string* why) {
  return ForEachField(data, why, [&](uint32_t field, uint32_t wire, WireReader& r) {
    if (field != 1) return r.Skip(wire, why);
    if (wire != 2) return WrongType("a BytesList value", why);
    std::string_view v;
    if (!r.Bytes(&v, why)) return false;
    f->bytes.push_back(v);
    return true;
  });
}

bool ParseFloatList(std::string_view data, TfFeature* f, std::string* why) {
  return ForEachField(data, why, [&](uint32_t field, uint32_t wire, WireReader& r) {
    if (field != 1) return r.Skip(wire, why);
    float v = 0;
    if (wire == 5) {  // one value
      uint32_t bits = 0;
      if (!r.Fixed32(&bits, why)) return false;
      std::memcpy(&v, &bits, 4);
      f->floats.push_back(v);
      return true;
    }
    if (wire != 2) return WrongType("a FloatList value", why);
    std::string_view packed;
    if (!r.Bytes(&packed, why)) return false;
    if (packed.size() % 4 != 0) {
      *why = "a packed FloatList of " + std::to_string(packed.size()) + " bytes, not a multiple of 4";
      return false;
    }
    for (size_t i = 0; i < packed.size(); i += 4) {
      std::memcpy(&v, packed.data() + i, 4);
      f->floats.push_back(v);
    }
    return true;
  });
}

bool ParseInt64List(std::string_view data, TfFeature* f, std::string* why) {
  return ForEachField(data, why, [&](uint32_t field, uint32_t wire, WireReader& r) {
    if (field != 1) return r.Skip(wire, why);
    uint64_t v = 0;
    if (wire == 0) {
      if (!r.Varint(&v, why)) return false;
      f->ints.push_back(static_cast<int64_t>(v));
      return true;
    }
    if (wire != 2) return WrongType("an Int64List value", why);
    std::string_view packed;
    if (!r.Bytes(&packed, why)) return false;
    WireReader values(packed);
    while (!values.done()) {
      if (!values.Varint(&v, why)) return false;
      f->ints.push_back(static_cast<int64_t>(v));
    }
    return true;
  });
}

bool ParseFeature(std::string_view data, TfFeature* f, std::string* why) {
  return ForEachField(data, why, [&](uint32_t field, uint32_t wire, WireReader& r) {
    if (field < 1 || field > 3) return r.Skip(wire, why);
    if (wire != 2) return WrongType("a Feature's list", why);
    std::string_view list;
    if (!r.Bytes(&list, why)) return false;
    *f = TfFeature();  // a oneof: the last one set wins
    if (field == 1) {
      f->kind = TfFeature::Kind::kBytes;
      return ParseBytesList(list, f, why);
    }
    if (field == 2) {
      f->kind = TfFeature::Kind::kFloat;
      return ParseFloatList(list, f, why);
    }
    f->kind = TfFeature::Kind::kInt64;
    return ParseInt64List(list, f, why);
  });
}

bool ParseEntry(std::string_view data, std::map<std::string, TfFeature>* features, std::string* why) {
  std::string key;
  TfFeature value;
  const bool parsed = ForEachField(data, why, [&](uint32_t field, uint32_t wire, WireReader& r) {
    if (field != 1 && field != 2) return r.Skip(wire, why);
    if (wire != 2) return WrongType("a feature map entry's key or value", why);
    std::string_view bytes;
    if (!r.Bytes(&bytes, why)) return false;
    if (field == 1) {
      key.assign(bytes);
      return true;
    }
    return ParseFeature(bytes, &value, why);
  });
  if (parsed) (*features)[key] = std::move(value);
  return parsed;
}

bool ParseFeatures(std::string_view data, std::map<std::string, TfFeature>* features, std::string* why) {
  return ForEachField(data, why, [&](uint32_t field, uint32_t wire, WireReader& r) {
    if (field != 1) return r.Skip(wire, why);
    if (wire != 2) return WrongType("a feature map entry", why);
    std::string_view entry;
    return r.Bytes(&entry, why) && ParseEntry(entry, features, why);
  });
}

}  // namespace

bool ParseTfExample(std::string_view data, std::map<std::string, TfFeature>* features, std::string* why) {
  features->clear();
  return ForEachField(data, why, [&](uint32_t field, uint32_t wire, WireReader& r) {
    if (field != 1) return r.Skip(wire, why);
    if (wire != 2) return WrongType("Example.features", why);
    std::string_view bytes;
    return r.Bytes(&bytes, why) && ParseFeatures(bytes, features, why);  // (merged if repeated)
  });
}

}  // namespace shardpack
