// Errors across the module's edge: a Status that is not OK becomes the Python exception a user
// expects (ValueError for a bad argument, FileNotFoundError, OSError, else RuntimeError), its
// message in the words of this interface (keywords, not flags: InPythonWords).
#pragma once

#include "shardpack/status.h"

namespace shardpack {

// Throws the exception for `s`; returns when s is OK.
void Raise(const Status& s);

// `amount` per second of `elapsed`; 0 before anything ran. The rates the loaders' stats() derive.
inline double PerSecond(double amount, double elapsed) { return elapsed > 0 ? amount / elapsed : 0.0; }

}  // namespace shardpack
