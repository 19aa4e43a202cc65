#!/usr/bin/env bash
# Every #include of a public header (include/shardpack/*.h) is a standard library header (<name>,
# no '/' or '.') or another public header ("shardpack/name.h"): an embedding user needs no
# third-party headers (nlohmann, OpenCV, TBB) to compile against shardpack. Prints each offender.
set -uo pipefail
include_dir=${1:?usage: public_headers_test.sh INCLUDE_DIR}
headers=("$include_dir"/shardpack/*.h)
[[ ${#headers[@]} -gt 5 ]] || { echo "found only ${#headers[@]} headers in $include_dir/shardpack"; exit 1; }
bad=$(grep -Hn '^[[:space:]]*#[[:space:]]*include' "${headers[@]}" |
      grep -Ev '#[[:space:]]*include[[:space:]]*(<[a-z_]+>|"shardpack/[a-z_]+\.h")[[:space:]]*(//.*)?$')
if [[ -n "$bad" ]]; then
  echo "public headers include what is not the standard library or shardpack/:"
  echo "$bad"
  exit 1
fi
echo "${#headers[@]} public headers include only the standard library and each other"
