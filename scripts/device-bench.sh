#!/usr/bin/env bash
# Runs on the device machine (one H200, 16 cores), with build/device-bundle.tar.xz carried from
# scripts/device-bundle.sh. Runs the GPU tests, then measures side by side, in this one run, images/s
# delivered into GPU memory:
#  (a) PyTorch's DataLoader over the image folder, PIL + torchvision random-resized-crop 224, 16
#      workers, pin_memory, .cuda(non_blocking=True)   (scripts/device_torch_baseline.py)
#  (b) shardpack from WebDataset JPEG shards, the same crop, with 1, 4, 8 and 16 threads
#  (c) shardpack from raw shards (pre-decoded 224x224)
# and the rate at which ResNet-50 trains on this GPU (bf16, channels_last, batch 256, synthetic
# input; scripts/device_resnet50.py). Targets: (b) at 16 threads >= 3x (a); (c) above ResNet-50.
# Results go to $OUT (device-bench.txt, *.json) and stdout.
#   run: bash scripts/device-bench.sh            (carry: build/device-bundle.tar.xz)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/device-out}
images=${IMAGES:-20000} seconds=${SECONDS_PER_RUN:-20}
mkdir -p "$out"
log() { echo "$*" | tee -a "$out/device-bench.txt"; }
work=/tmp/shardpack-device
rm -rf "$work" && mkdir -p "$work"
python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" build/device-bundle.tar.xz "$work"
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
sp="$work/bin/shardpack"
nvidia-smi -L | tee -a "$out/device-bench.txt"
log "cores: $(nproc)"

log "== GPU tests"
"$work/bin/cuda_feed_test" --gtest_brief=1 2>&1 | tee "$out/gpu-tests.txt" | tail -3 | tee -a "$out/device-bench.txt"

log "== data: $images images (PIL, ImageNet-like sizes and bytes)"
python3 scripts/device_make_images.py "$work/tree" "$images" 100 "$(nproc)"
"$sp" pack "$work/tree" "$work/wds" --shuffle --quiet --no-sync | tee -a "$out/device-bench.txt"
"$sp" pack "$work/tree" "$work/raw" --format raw --resize 256 --crop 224 --quiet --no-sync | tee -a "$out/device-bench.txt"
cat "$work"/wds/*.tar "$work"/raw/*.npy > /dev/null  # page cache warm for every contender

json() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
log "== (a) PyTorch DataLoader, 16 workers, into GPU memory"
python3 scripts/device_torch_baseline.py "$work/tree" 224 256 16 "$seconds" | tee "$out/a.txt" | tee -a "$out/device-bench.txt"
a=$(awk '{print $NF}' "$out/a.txt")
declare -A b
for t in 1 4 8 16; do
  "$sp" bench "$work/wds" --device cuda --dtype bfloat16 --crop 224 --batch 256 --threads "$t" --seconds "$seconds" \
    --json > "$out/b$t.json"
  b[$t]=$(json images_per_s < "$out/b$t.json")
  log "(b) shardpack wds, $t threads: ${b[$t]} images/s (copy engine busy $(json copy_busy_share < "$out/b$t.json"))"
done
"$sp" bench "$work/raw" --device cuda --dtype bfloat16 --eval --crop 224 --batch 256 --threads 16 --seconds "$seconds" \
  --json > "$out/c.json"
c=$(json images_per_s < "$out/c.json")
log "(c) shardpack raw, 16 threads: $c images/s"
log "== ResNet-50 training rate (bf16, channels_last, batch 256, synthetic)"
python3 scripts/device_resnet50.py 256 | tee "$out/resnet.txt" | tee -a "$out/device-bench.txt"
r=$(awk '{print $NF}' "$out/resnet.txt")
python3 - "$a" "${b[16]}" "$c" "$r" <<'PY' | tee -a "$out/device-bench.txt"
import sys
a, b16, c, r = map(float, sys.argv[1:])
print(f"(b) 16 threads / (a): {b16 / a:.2f} (target 3)")
print(f"(c) / ResNet-50 training: {c / r:.2f} (target above 1)")
PY
