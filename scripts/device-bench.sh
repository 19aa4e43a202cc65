#!/usr/bin/env bash
# Runs on the device machine (one H200, 16 cores), with build/device-bundle.tar.xz carried from
# scripts/device-bundle.sh; about 6 minutes. In this one run:
#  1. the GPU tests: cuda_feed_test (the host-to-device benchmark tests too) and the Python
#     device="cuda" and pin_memory tests under the device's Python 3.12 and PyTorch;
#  2. images/s delivered into GPU memory, side by side, SECONDS_PER_RUN each:
#     (a) PyTorch's DataLoader over the image folder, PIL + torchvision random-resized-crop 224, 16
#         workers, pin_memory, .cuda(non_blocking=True)   (scripts/device_torch_baseline.py)
#     (b) shardpack from WebDataset JPEG shards, the same crop, 1, 4, 8 and 16 threads, bfloat16 NCHW
#     (c) shardpack from raw shards (pre-decoded 224x224)
#  3. ResNet-50 (bf16, channels_last, batch 256) trained for TRAIN_SECONDS on synthetic input, then
#     fed by (a) and by (b), with the share of time the GPU waited for data (scripts/device_train.py);
#  4. shardpack doctor on the image folder with that model rate (its host-to-device row measured);
#  5. whether the CUDA toolkit has nvJPEG, the GPU's JPEG engines, and nvJPEG's batched decode of
#     the same images (hardware and GPU back-ends; scripts/device_nvjpeg.cc, built there).
# Targets (issue 44): (b) at 16 threads >= 3x (a) and >= 13,000 images/s; (c) >= 100,000 images/s;
# ResNet-50 fed by (b) within 5% of its synthetic-input rate. Everything goes to $OUT
# (device-bench.txt, and the logs and *.json in device-bench.tar) and stdout; a failing step is
# reported and the rest run.
#   run: bash scripts/device-bench.sh            (carry: build/device-bundle.tar.xz)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/device-out}
images=${IMAGES:-16000} seconds=${SECONDS_PER_RUN:-10} train_seconds=${TRAIN_SECONDS:-45}
mkdir -p "$out"
log() { echo "$*" | tee -a "$out/device-bench.txt"; }
step() { log "== $1 (at ${SECONDS} s)"; }
source scripts/device-unpack.sh  # $work, $sp, LD_LIBRARY_PATH, PYTHONPATH, the tools the Python tests run
nvidia-smi -L | tee -a "$out/device-bench.txt"
log "cores: $(nproc); $(python3 -c 'import sys, torch, torchvision; print("python", sys.version.split()[0], "torch", torch.__version__, "torchvision", torchvision.__version__)')"
log "bundled libraries used: $(ls "$work/lib" | wc -l)"

step "GPU tests: cuda_feed_test"
"$work/bin/cuda_feed_test" --gtest_brief=0 >"$out/gpu-tests.txt" 2>&1
log "cuda_feed_test exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/gpu-tests.txt" | tr '\n' ' ')"
step "GPU tests: Python device=\"cuda\" and pin_memory (python/tests/test_loader.py)"
timeout 120 python3 -m pytest -q -p no:cacheprovider -rs python/tests/test_loader.py -k "cuda or pin_memory" \
  >"$out/python-tests.txt" 2>&1
log "pytest exit $?: $(tail -1 "$out/python-tests.txt")"

step "data: $images images (PIL, ImageNet-like sizes and bytes)"
python3 scripts/device_make_images.py "$work/tree" "$images" 100 "$(nproc)"
"$sp" pack "$work/tree" "$work/wds" --shuffle --quiet --no-sync | tee -a "$out/device-bench.txt"
"$sp" pack "$work/tree" "$work/raw" --format raw --resize 256 --crop 224 --quiet --no-sync | tee -a "$out/device-bench.txt"
find "$work/wds" "$work/raw" -type f -exec cat {} + >/dev/null  # page cache warm for every contender

json() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])" 2>/dev/null; }
step "(a) PyTorch DataLoader, 16 workers, into GPU memory"
timeout 90 python3 scripts/device_torch_baseline.py "$work/tree" 224 256 16 "$seconds" | tee "$out/a.txt" | tee -a "$out/device-bench.txt"
a=$(awk '{print $NF}' "$out/a.txt")
declare -A b
for t in 1 4 8 16; do
  step "(b) shardpack wds, $t threads"
  timeout 90 "$sp" bench "$work/wds" --device cuda --dtype bfloat16 --crop 224 --batch 256 --threads "$t" --seconds "$seconds" \
    --json >"$out/b$t.json" 2>"$out/b$t.err"
  b[$t]=$(json images_per_s <"$out/b$t.json")
  log "(b) shardpack wds, $t threads: ${b[$t]:-failed} images/s (copy engine busy $(json copy_busy_share <"$out/b$t.json"))"
done
step "(c) shardpack raw, 16 threads"
timeout 90 "$sp" bench "$work/raw" --device cuda --dtype bfloat16 --eval --crop 224 --batch 256 --threads 16 --seconds "$seconds" \
  --json >"$out/c.json" 2>"$out/c.err"
c=$(json images_per_s <"$out/c.json")
log "(c) shardpack raw, 16 threads: ${c:-failed} images/s"

for feed in synthetic torch shardpack; do
  step "ResNet-50 training, bf16, channels_last, batch 256, fed by: $feed"
  data=$work/tree
  [[ $feed == shardpack ]] && data=$work/wds
  timeout $((train_seconds + 90)) python3 scripts/device_train.py "$feed" "$data" "$train_seconds" 256 16 2>"$out/train-$feed.err" |
    tee "$out/train-$feed.txt" | tee -a "$out/device-bench.txt"
done
rate() { sed -n 's/.*images\/s \([0-9.]*\),.*/\1/p' "$out/train-$1.txt"; }
r=$(rate synthetic)

step "shardpack doctor on the image folder, --model-rate ${r:-unknown}"
timeout 120 "$sp" doctor "$work/tree" ${r:+--model-rate "$r"} --seconds 30 >"$out/doctor.txt" 2>&1
log "doctor exit $?"
cat "$out/doctor.txt" | tee -a "$out/device-bench.txt"

step "nvJPEG"
cuda_home=$(dirname "$(dirname "$(command -v nvcc)")")
log "nvcc: $(command -v nvcc); nvjpeg.h: $(ls "$cuda_home"/include/nvjpeg.h "$cuda_home"/targets/*/include/nvjpeg.h 2>/dev/null | head -1); libnvjpeg: $(ls "$cuda_home"/lib64/libnvjpeg.so* "$cuda_home"/targets/*/lib/libnvjpeg.so* 2>/dev/null | head -1)"
nvidia-smi -q | grep -i -E "jpg|jpeg|ofa" | head -8 | tee -a "$out/device-bench.txt"
if nvcc -O2 -o "$work/nvjpeg_bench" scripts/device_nvjpeg.cc -lnvjpeg >"$out/nvjpeg-build.txt" 2>&1; then
  for backend in hardware gpu-hybrid; do
    timeout 60 "$work/nvjpeg_bench" "$work/tree" "$backend" 128 "$seconds" 4096 2>&1 | tee -a "$out/device-bench.txt"
  done
else
  log "nvjpeg_bench did not build: $(tail -3 "$out/nvjpeg-build.txt")"
fi

step "summary"
/usr/bin/env python3 - "${a:-0}" "${b[16]:-0}" "${c:-0}" "${r:-0}" "$(rate torch)" "$(rate shardpack)" <<'PY' | tee -a "$out/device-bench.txt"
import sys
a, b16, c, r, ta, tb = (float(v or 0) for v in sys.argv[1:])
print(f"(b) at 16 threads: {b16:,.0f} images/s (target 13,000); (b) / (a) = {b16 / a if a else 0:.2f} (target 3)")
print(f"(c) at 16 threads: {c:,.0f} images/s (target 100,000)")
print(f"ResNet-50 fed by (b) / synthetic = {tb / r if r else 0:.3f} (target >= 0.95); fed by (a) / synthetic = {ta / r if r else 0:.3f}")
PY
# At most 8 files come back from a device run: everything as one tarball, device-bench.txt beside it.
tar -C "$out" -cf /tmp/device-bench.tar . && find "$out" -mindepth 1 ! -name device-bench.txt -delete &&
  mv /tmp/device-bench.tar "$out/device-bench.tar"
