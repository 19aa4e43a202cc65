# Sourced by the device scripts (device-bench.sh, device-python-tests.sh) on the device machine:
# unpacks build/device-bundle.tar.xz (scripts/device-bundle.sh) into $work and points
# LD_LIBRARY_PATH and PYTHONPATH at it. Our Debian libraries are used only where the machine lacks
# that soname: the machine's own are newer, and PyTorch shares the process with the Python module.
work=/tmp/shardpack-device
rm -rf "$work" && mkdir -p "$work"
python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" build/device-bundle.tar.xz "$work"
have=$(ldconfig -p | awk '{print $1}')
for lib in "$work"/lib/*; do
  if grep -qx "$(basename "$lib")" <<<"$have"; then rm "$lib"; fi
done
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$work/python:$PWD/python/tests:$PWD/scripts" PYTHONUNBUFFERED=1
export SHARDPACK_CLI=$work/bin/shardpack SHARDPACK_MAKE_IMAGE_TREE=$work/bin/make_image_tree \
  SHARDPACK_DUMP_BATCHES=$work/bin/dump_batches
sp=$work/bin/shardpack
