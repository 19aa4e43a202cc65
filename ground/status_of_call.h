// StatusOfCall: the body of a thread of the library's own, with every exception turned into a
// Status.
//
// An exception that leaves a std::thread's function ends the process (std::terminate): a training
// job dies with "terminate called after throwing an instance of 'std::bad_alloc'" and no word of
// what was being done. Every thread the library starts (the loader's producer, the downloaders, the
// uploaders, the writer's pipeline) runs its work through this, so that an allocation that fails,
// or an exception from a third-party library not caught nearer, comes back to the caller as an
// error naming the job instead. The Status is IOError: memory the system refused is a refusal like
// a failed read.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "shardpack/status.h"

namespace shardpack {

template <typename Fn>
Status StatusOfCall(const char* what, Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Status::IOError(std::string(what) + ": out of memory (an allocation failed)");
  } catch (const std::exception& e) {
    return Status::IOError(std::string(what) + ": " + e.what());
  } catch (...) {
    return Status::IOError(std::string(what) + ": an unknown exception");
  }
}

}  // namespace shardpack
