#!/usr/bin/env bash
# Prepares what scripts/device-bench.sh needs on the device machine, which has CUDA 13, PyTorch and
# PIL but none of our Debian packages: a Release build with the CUDA feed (nvcc here), the shardpack
# binary and the GPU test, and every shared library `ldd` lists for them except glibc's and the
# driver's, in one xz tarball (python's tarfile can unpack it anywhere):
#   scripts/device-bundle.sh        -> build/device-bundle.tar.xz (under the 64 MiB a device run carries)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release -DSHARDPACK_CUDA=ON
test -f build/release/tests/cuda_feed_test || { echo "device-bundle: no CUDA build (is nvcc on PATH?)" >&2; exit 1; }
stage=build/device-bundle
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/lib"
cp build/release/shardpack build/release/tests/cuda_feed_test "$stage/bin/"
for b in "$stage"/bin/*; do
  ldd "$b" | awk '/=> \// {print $3}'
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|libcuda)\.so|ld-linux' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
tar -C "$stage" -cf - bin lib | xz -T2 -6 > build/device-bundle.tar.xz
size=$(stat -c %s build/device-bundle.tar.xz)
echo "device-bundle: build/device-bundle.tar.xz, $((size / 1048576)) MiB ($(ls "$stage/lib" | wc -l) libraries)"
if ((size > 60 * 1048576)); then echo "device-bundle: too large to carry (64 MiB limit)" >&2; exit 1; fi
