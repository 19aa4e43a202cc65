#!/usr/bin/env bash
# Checks the Python package the way Python users install it, in fresh virtual environments that see
# Debian's numpy and torch:
#   1. pip install --no-build-isolation .        (from the source tree)
#   2. pip wheel, then pip install of that wheel  (the wheel alone)
# In each, `import shardpack` and the `shardpack` console script must work: the script packs a
# generated tree, and shardpack.open() must give the labels the tree's layout gives.
#   scripts/check-python-package.sh [CMAKE_BUILD_DIR]   (reused: nothing compiles twice)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build/release}")
work=$(mktemp -d /tmp/shardpack-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
export SHARDPACK_BUILD_DIR=$build PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1

cmake_version=$(sed -n 's/^project(shardpack VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
py_version=$(sed -n 's/^version = "\([0-9.]*\)".*/\1/p' pyproject.toml)
[[ -n "$cmake_version" && "$cmake_version" == "$py_version" ]] ||
  { echo "pyproject.toml says version '$py_version', CMakeLists.txt '$cmake_version'"; exit 1; }

"$build"/tests/make_image_tree --classes 3 --images 10 --small "$work/tree" >/dev/null
expected=$(scripts/tree-labels.sh "$work/tree")

check_venv() {  # VENV NAME: the installed package imports, its script packs, open() reads labels
  local venv=$1 name=$2
  (cd "$work" && "$venv/bin/shardpack" pack tree "ds-$name" --quiet --no-sync >/dev/null)
  got=$(cd "$work" && "$venv/bin/python" -c "
import shardpack, sys
assert shardpack.__version__ == '$cmake_version', shardpack.__version__
assert shardpack.__file__.startswith('$venv/'), shardpack.__file__
ds = shardpack.open('ds-$name')
print(' '.join(str(int(ds[i]['cls'])) for i in range(len(ds))))")
  echo "$name: $got"
  [[ "$got" == "$expected" ]] || { echo "check-python-package: $name read other labels than $expected"; exit 1; }
}

echo "expected (from the tree): $expected"
/usr/bin/python3 -m venv --system-site-packages "$work/venv-source"
"$work/venv-source/bin/pip" install --quiet --no-build-isolation .
check_venv "$work/venv-source" "pip install ."

"$work/venv-source/bin/pip" wheel --quiet --no-build-isolation --no-deps -w "$work/wheels" .
wheel=$(ls "$work"/wheels/shardpack-"$cmake_version"-*.whl)
/usr/bin/python3 -m venv --system-site-packages "$work/venv-wheel"
"$work/venv-wheel/bin/pip" install --quiet --no-build-isolation "$wheel"
check_venv "$work/venv-wheel" "$(basename "$wheel")"
echo "check-python-package: pip install . and the wheel both work in fresh virtual environments"
