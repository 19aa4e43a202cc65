#include "shardpack/status.h"

#include <cstring>

namespace shardpack {

Status Status::FromErrno(const std::string& context, int errnum) {
  return IOError(context + ": " + std::strerror(errnum));
}

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kInvalidArgument:
      name = "invalid argument";
      break;
    case Code::kNotFound:
      name = "not found";
      break;
    case Code::kIOError:
      name = "I/O error";
      break;
    case Code::kDataLoss:
      name = "data loss";
      break;
    case Code::kCorrupt:
      name = "corrupt input";
      break;
    case Code::kUnsupported:
      name = "unsupported";
      break;
    case Code::kAborted:
      name = "aborted";
      break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace shardpack
