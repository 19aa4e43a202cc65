// Parsing and printing of byte sizes as users write them on the command line.
#pragma once

#include <cstdint>
#include <string>

#include "shardpack/status.h"

namespace shardpack {

// Parses "1048576", "512MB", "1.5GB", "64KiB", "2g" into bytes. Decimal suffixes (K, KB, M, MB, G,
// GB, T, TB) are powers of 1000, binary ones (KiB, MiB, GiB, TiB) powers of 1024; case is ignored.
// Fails with InvalidArgument on anything else, on zero and on values over 2^63.
Status ParseByteSize(const std::string& text, uint64_t* bytes);

// A number as people write it in a message: 6 significant digits, no trailing zeros ("0.05",
// "-1", "1e-09"), where std::to_string gives "0.050000" and "0.000000".
std::string FormatNumber(double value);

// "1.5 GB", "512.0 MB", "900 B": decimal units, for humans.
std::string FormatBytes(uint64_t bytes);

}  // namespace shardpack
