#!/usr/bin/env bash
# Installs a built tree into a scratch prefix and checks the package from outside, by running the
# README's embedding lines as they stand (taken from README.md): cmake --install, examples/embed/
# built as a separate CMake project through find_package(shardpack CONFIG), and once more with plain
# g++ through pkg-config; both read a dataset the installed CLI packed, and
# must print the labels that the image tree's own layout gives (scripts/tree-labels.sh).
#   scripts/check-install.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
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

echo "expected (from the tree): $expected"
echo "find_package build:       $got_cmake"
echo "pkg-config build:         $got_pkgconfig"
[[ $(wc -w <<<"$expected") -eq 18 && "$got_cmake" == "$expected" && "$got_pkgconfig" == "$expected" ]] ||
  { echo "check-install: the installed package printed other labels"; exit 1; }
echo "check-install: the installed package builds and reads the dataset (find_package and pkg-config)"
