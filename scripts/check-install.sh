#!/usr/bin/env bash
# Installs a built tree into a scratch prefix and checks the package from outside, by running the
# README's embedding lines as they stand (taken from README.md): cmake --install, examples/embed/
# built as a separate CMake project through find_package(shardpack CONFIG), and once more with plain
# g++ through pkg-config; both read a dataset the installed CLI packed, and
# must print the labels that the image tree's own layout gives (scripts/tree-labels.sh).
#   scripts/check-install.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
build=${1:?usage: scripts/check-install.sh BUILD_DIR}
work=$(mktemp -d /tmp/shardpack-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
"$build"/tests/make_image_tree --classes 4 --images 18 --small "$work/tree" >/dev/null

# The README's embedding lines, extracted from README.md (<!-- doc-test: scripts/check-install.sh -->)
# and run as they stand, with its placeholders pointed at this build and this scratch folder.
readme=$(scripts/doc_blocks.py README.md scripts/check-install.sh |
  sed -E "s#\bbuild/release\b#$build#g; s#\bbuild/embed-pc\b#$work/embed-pkgconfig#g;
          s#\bbuild/embed\b#$work/embed-cmake#g; s#\bPREFIX\b#$prefix#g")
echo "check-install: running README.md's embedding lines:"
echo "$readme"
bash -euo pipefail -c "$readme" >/dev/null

"$prefix"/bin/shardpack pack "$work/tree" "$work/dataset" --quiet --no-sync --samples-per-shard 5 >/dev/null
expected=$(scripts/tree-labels.sh "$work/tree")
got_cmake=$("$work/embed-cmake/embed" "$work/dataset" 18)
# As README.md runs it: no LD_LIBRARY_PATH (the .pc file's Libs carry the library's run path).
got_pkgconfig=$(env -u LD_LIBRARY_PATH "$work/embed-pkgconfig" "$work/dataset" 18)

# docs/writer.md's C++ lines (<!-- doc-test: scripts/check-install.sh -->), as they stand inside a
# main() that gives them jpeg_bytes, built against the installed package: they write an LMDB dataset
# of one sample, which the installed CLI verifies (decoding it) and counts.
fragment=$(scripts/doc_blocks.py docs/writer.md scripts/check-install.sh)
{
  printf '#include <fstream>\n#include <iterator>\n#include <string>\n'
  grep '^#include' <<<"$fragment"
  printf 'int main(int argc, char** argv) {\n  (void)argc;\n  std::ifstream in(argv[1], std::ios::binary);\n'
  printf '  std::string jpeg_bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());\n'
  grep -v '^#include' <<<"$fragment" | sed 's#"/data/pets-lmdb"#argv[2]#'
  printf '  return s.ok() ? 0 : 1;\n}\n'
} >"$work/writer_lines.cc"
# shellcheck disable=SC2046  # pkg-config's flags are words
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
g++ -std=c++17 -Wall -Wextra -o "$work/writer-lines" "$work/writer_lines.cc" $(pkg-config --cflags --libs shardpack)
"$work/writer-lines" "$(find "$work/tree" -iname '*.jpeg' | sort | head -1)" "$work/pets-lmdb"
"$prefix"/bin/shardpack verify "$work/pets-lmdb" --decode >/dev/null
written=$("$prefix"/bin/shardpack stat "$work/pets-lmdb" --json |
  "$py" -c 'import json, sys; r = json.load(sys.stdin); print(r["samples"], r["format"])')
echo "docs/writer.md's C++ lines wrote: $written"
[[ $written == "1 lmdb" ]] || { echo "check-install: docs/writer.md's C++ lines did not write one LMDB sample"; exit 1; }

echo "expected (from the tree): $expected"
echo "find_package build:       $got_cmake"
echo "pkg-config build:         $got_pkgconfig"
[[ $(wc -w <<<"$expected") -eq 18 && "$got_cmake" == "$expected" && "$got_pkgconfig" == "$expected" ]] ||
  { echo "check-install: the installed package printed other labels"; exit 1; }
echo "check-install: the installed package builds and reads the dataset (find_package and pkg-config)"
