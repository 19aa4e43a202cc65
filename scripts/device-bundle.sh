#!/usr/bin/env bash
# Prepares what scripts/device-bench.sh needs on the device machine, which has CUDA 13, PyTorch and
# PIL under Python 3.12 but none of our Debian packages:
#  - a Release build with the CUDA feed (nvcc here): the shardpack binary, the GPU test, and the
#    helpers the Python tests run (make_image_tree, dump_batches);
#  - the Python package with its _shardpack module compiled once more for Python 3.12 (pyenv's
#    headers here, PY312), from the Release build's own compile and link lines, since Debian's
#    python3 is 3.11 and the device's is 3.12;
#  - every shared library `ldd` lists for them except glibc's, the C++ runtime's and the driver's
#    (the device's own are newer and compatible); device-bench.sh drops those the device has too.
# All in one xz tarball (python's tarfile can unpack it anywhere):
#   scripts/device-bundle.sh        -> build/device-bundle.tar.xz (under the 64 MiB a device run carries)
set -euo pipefail
cd "$(dirname "$0")/.."
py312=${PY312:-/root/.pyenv/versions/3.12.1}
scripts/install-deps.sh
scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release -DSHARDPACK_CUDA=ON
test -f build/release/tests/cuda_feed_test || { echo "device-bundle: no CUDA build (is nvcc on PATH?)" >&2; exit 1; }
stage=build/device-bundle
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/lib" "$stage/python"
cp build/release/shardpack build/release/tests/{cuda_feed_test,make_image_tree,dump_batches} "$stage/bin/"

# The module for Python 3.12: the same flags and link line as the Release build's 3.11 module, with
# 3.12's headers and file name.
module=build/release/python/CMakeFiles/_shardpack.dir
test -f "$py312/include/python3.12/Python.h" || { echo "device-bundle: no Python 3.12 headers under $py312" >&2; exit 1; }
cp -r python/shardpack "$stage/python/"
for src in python/src/module.cc python/src/writer_bindings.cc; do
  obj=$stage/$(basename "$src").o  # module.cc.o: the name the link line below has, in another folder
  flags=$(sed -n 's/^CXX_DEFINES = //p;s/^CXX_INCLUDES = //p;s/^CXX_FLAGS = //p' "$module/flags.make" |
    sed "s#/usr/include/python3.11#$py312/include/python3.12#" | tr '\n' ' ')
  eval "c++ $flags -c $src -o $obj"  # eval: the flags are quoted as make writes them (-DSHARDPACK_VERSION=\"0.1.0\")
done
link=$(sed -e "s#-o shardpack/_shardpack[^ ]*#-o $PWD/$stage/python/shardpack/_shardpack.cpython-312-x86_64-linux-gnu.so#" \
  -e "s#CMakeFiles/_shardpack.dir/src/#$PWD/$stage/#g" "$module/link.txt")
(cd build/release/python && eval "$link")

for b in "$stage"/bin/* "$stage"/python/shardpack/_shardpack*.so; do
  ldd "$b" | awk '/=> \// {print $3}'
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|libcuda|libstdc\+\+|libgcc_s)\.so|ld-linux' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
tar -C "$stage" -cf - bin lib python | xz -T2 -6 > build/device-bundle.tar.xz
size=$(stat -c %s build/device-bundle.tar.xz)
echo "device-bundle: build/device-bundle.tar.xz, $((size / 1048576)) MiB ($(ls "$stage/lib" | wc -l) libraries)"
if ((size > 60 * 1048576)); then echo "device-bundle: too large to carry (64 MiB limit)" >&2; exit 1; fi
