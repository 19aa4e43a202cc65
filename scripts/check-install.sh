#!/usr/bin/env bash
# Installs a built tree into a scratch prefix (cmake --install) and checks the package from outside:
# examples/embed/ is built as a separate CMake project through find_package(shardpack CONFIG), and
# once more with plain g++ through pkg-config; both read a dataset the installed CLI packed, and
# must print the labels that the image tree's own layout gives (scripts/tree-labels.sh).
#   scripts/check-install.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/check-install.sh BUILD_DIR}
work=$(mktemp -d /tmp/shardpack-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
"$build"/tests/make_image_tree --classes 4 --images 18 --small "$work/tree" >/dev/null
"$prefix"/bin/shardpack pack "$work/tree" "$work/dataset" --quiet --no-sync --samples-per-shard 5 >/dev/null

expected=$(scripts/tree-labels.sh "$work/tree")

cmake -S examples/embed -B "$work/embed-cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/embed-cmake" >/dev/null
got_cmake=$("$work/embed-cmake/embed" "$work/dataset" 18)

export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name shardpack.pc)")
# shellcheck disable=SC2046  # pkg-config's flags are words
g++ -std=c++17 -o "$work/embed-pkgconfig" examples/embed/main.cc $(pkg-config --cflags --libs shardpack)
# As README.md runs it: no LD_LIBRARY_PATH (the .pc file's Libs carry the library's run path).
got_pkgconfig=$(env -u LD_LIBRARY_PATH "$work/embed-pkgconfig" "$work/dataset" 18)

echo "expected (from the tree): $expected"
echo "find_package build:       $got_cmake"
echo "pkg-config build:         $got_pkgconfig"
[[ $(wc -w <<<"$expected") -eq 18 && "$got_cmake" == "$expected" && "$got_pkgconfig" == "$expected" ]] ||
  { echo "check-install: the installed package printed other labels"; exit 1; }
echo "check-install: the installed package builds and reads the dataset (find_package and pkg-config)"
