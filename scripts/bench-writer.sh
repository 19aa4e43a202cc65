#!/usr/bin/env bash
# Writing a dataset from Python (docs/writer.md) against pack and webdataset's ShardWriter, in the
# same run, on the same files (docs/performance.md, "Writing from code"):
#  - `shardpack pack --list LIST` (the files read by pack's own threads);
#  - shardpack.Writer fed each file's bytes by a Python loop that reads the file (the reads count on
#    the writer's side);
#  - webdataset's own ShardWriter fed the same way: the release in build/venv (requirements.txt), or
#    with --webdataset its source run in place from a repository snapshot (a checkout, or a bare git
#    directory whose tree is extracted under --work; never copied into this project).
# Each side writes wds shards without syncing; the sides take turns going first; the medians are
# compared, of the job's own time (the figures the targets apply to) and of the whole process's.
#
#   scripts/bench-writer.sh [--images N] [--runs R] [--work DIR] [--bin DIR] [--webdataset DIR] [--scale S]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
images=20000 runs=5 work=build/bench bin= webdataset= scale=0.5
usage="$0 [--images N] [--runs R] [--work DIR] [--bin DIR] [--webdataset DIR] [--scale S]"
args=()
while (($#)); do
  case $1 in
    --webdataset) webdataset=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
source scripts/bench-args.sh "${args[@]}"
if [[ -z $webdataset ]]; then
  wds_src=  # the installed release
elif [[ -d $webdataset/src/webdataset ]]; then
  wds_src=$webdataset/src
else  # a bare git directory (a repository snapshot): its tree, extracted once
  wds_src=$work/webdataset-snapshot/src
  if [[ ! -d $wds_src/webdataset ]]; then
    mkdir -p "$work/webdataset-snapshot"
    echo "extracting webdataset's source from $webdataset (HEAD $(git --git-dir="$webdataset" rev-parse --short HEAD))"
    git --git-dir="$webdataset" archive HEAD src | tar x -C "$work/webdataset-snapshot"
  fi
fi
echo "webdataset $(PYTHONPATH=$wds_src "$py" -c 'import webdataset; print(webdataset.__version__)')" \
  "from ${webdataset:-build/venv}"

# bench-pack.sh's tree, by default at half the side (--scale 0.5: about 29 KB a JPEG): at full size
# (--scale 1, 112 KB) each run writes 2.2 GB, and this VM's page-cache writeback then varied pack's
# own rate 2x from run to run.
if [[ $scale == 1 ]]; then src=$work/tree-$images; else src=$work/tree-$images-scale-$scale; fi
scripts/bench-tree.sh "$bin" "$src" --classes 100 --images "$images" --png-every 0 --noise 46 --scale "$scale"
list=$work/writer-list.txt
(cd "$src" && find . -mindepth 2 -type f -iname '*.jpeg' | sed 's|^\./||' | sort | awk -F/ '{print $0 "\t" $1}') >"$list"
bytes=$(du -sb --exclude=.complete "$src" | cut -f1)
echo "tree: $images images, $bytes bytes ($((bytes / images)) bytes average)"
cat "$src"/*/* >/dev/null  # warm the page cache for every side

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# Runs "$@" (dirty pages of earlier runs flushed first) and prints two images/s figures: the job's
# own (pack's --json seconds; the Python sides' clock from opening the writer to closing it, file
# reads included), and the whole process's (the interpreter's start and imports included).
rate() {
  sync
  local start end job
  start=$(date +%s.%N)
  job=$("$@")
  end=$(date +%s.%N)
  "$py" -c "import json, sys
job = sys.argv[1]
job = $images / json.loads(job)['seconds'] if job.startswith('{') else float(job)
print(job, $images / ($end - $start))" "$job"
}
out=$work/writer-out
# Each side writes into an empty folder (the last run's output removed before the clock starts), and
# the sides take turns going first.
side() {
  rm -rf "$out-$1"
  case $1 in
    pack) rate "$bin/shardpack" pack "$src" "$out-pack" --list "$list" --no-sync --json ;;
    writer) rate env PYTHONPATH="$bin/python" "$py" scripts/bench_writer.py shardpack "$list" "$src" \
      "$out-writer" ;;
    wds) rate env PYTHONPATH="$wds_src" "$py" scripts/bench_writer.py webdataset "$list" "$src" "$out-wds" ;;
  esac
}
declare -A job=() whole=()
order=(pack writer wds)
for ((r = 1; r <= runs; r++)); do
  for s in "${order[@]}"; do
    read -r j w <<<"$(side "$s")"
    job[$s]+=" $j" whole[$s]+=" $w"
  done
  printf 'run %d (%s first), images/s of the job (whole process):' "$r" "${order[0]}"
  for s in pack writer wds; do
    read -ra js <<<"${job[$s]}"
    read -ra ws <<<"${whole[$s]}"
    printf ' %s %.0f (%.0f)' "$s" "${js[-1]}" "${ws[-1]}"
  done
  echo
  order=("${order[@]:1}" "${order[0]}")
done
# summary KIND: the medians of job or whole, and the ratios the issue asks for.
summary() {
  local -n table=$1
  read -ra p <<<"${table[pack]}"
  read -ra w <<<"${table[writer]}"
  read -ra s <<<"${table[wds]}"
  local mp mw ms
  mp=$(median "${p[@]}") mw=$(median "${w[@]}") ms=$(median "${s[@]}")
  "$py" -c "print(f'$1: median images/s pack --list {$mp:.0f}, shardpack.Writer {$mw:.0f}, ShardWriter {$ms:.0f}; '
      f'Writer / pack {$mw / $mp:.2f}x (target >= 0.9), Writer / ShardWriter {$mw / $ms:.2f}x (target >= 1.3), '
      f'pack / ShardWriter {$mp / $ms:.2f}x')"
}
summary job
summary whole
# The written dataset is pack's: the same shards, byte for byte, and it verifies.
cmp "$out-pack/shard-000000.tar" "$out-writer/shard-000000.tar" && echo "writer shards equal pack's: yes"
"$bin/shardpack" verify "$out-writer" | head -1
