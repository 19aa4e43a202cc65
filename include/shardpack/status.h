// Status: the error value returned across every module boundary of shardpack.
//
// A Status is either OK or carries a Code and a message. Messages name the file involved and, where
// there is one, what the user can do about it. Library code never throws across its public API and
// never prints; exceptions from third-party libraries (OpenCV, oneTBB) are caught where we call them
// and turned into a Status.
#pragma once

#include <string>
#include <utility>

namespace shardpack {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,  // the caller asked for something impossible (bad flag, bad path)
    kNotFound,         // a file or entry that must exist does not
    kIOError,          // the operating system refused a read, write, rename, ...
    kDataLoss,         // stored data is damaged: checksum mismatch, truncation, bad structure
    kCorrupt,          // an input (image, archive) cannot be understood
    kUnsupported,      // valid input that this build cannot handle
    kAborted,          // stopped on purpose (strict mode, user interrupt)
  };

  Status() = default;
  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status IOError(std::string msg) { return Status(Code::kIOError, std::move(msg)); }
  static Status DataLoss(std::string msg) { return Status(Code::kDataLoss, std::move(msg)); }
  static Status Corrupt(std::string msg) { return Status(Code::kCorrupt, std::move(msg)); }
  static Status Unsupported(std::string msg) { return Status(Code::kUnsupported, std::move(msg)); }
  static Status Aborted(std::string msg) { return Status(Code::kAborted, std::move(msg)); }
  // An IOError whose message is "<context>: <strerror(errnum)>".
  static Status FromErrno(const std::string& context, int errnum);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "OK", or "<code name>: <message>".
  std::string ToString() const;
  // The same error with `suffix` appended to its message (OK stays OK).
  Status WithSuffix(const std::string& suffix) const { return ok() ? *this : Status(code_, message_ + suffix); }
  Status WithPrefix(const std::string& prefix) const { return ok() ? *this : Status(code_, prefix + message_); }
  // The same error with another message (OK stays OK).
  Status WithMessage(std::string message) const { return ok() ? *this : Status(code_, std::move(message)); }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace shardpack

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define SHARDPACK_RETURN_IF_ERROR(expr) \
  do {                                  \
    ::shardpack::Status _st = (expr);   \
    if (!_st.ok()) return _st;          \
  } while (0)
