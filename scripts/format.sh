#!/usr/bin/env bash
# Formats every tracked C++ and CUDA source with the repository's .clang-format (clang-format 14,
# Debian's). With --check, changes nothing and fails listing the files that differ (scripts/test.sh
# runs it so).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu')
if [[ ${1:-} == --check ]]; then
  bad=()
  for f in "${files[@]}"; do clang-format "$f" | cmp -s - "$f" || bad+=("$f"); done
  if ((${#bad[@]})); then
    printf 'not formatted (run scripts/format.sh): %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files clean"
else
  clang-format -i "${files[@]}"
fi
