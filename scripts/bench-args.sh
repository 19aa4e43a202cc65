# Sourced by benchmark scripts (bench-mix.sh, bench-resize.sh): their common options, the packages
# they need, and the build they measure. The caller sets the defaults first (images, runs, work, bin)
# and its usage line in `usage`, then: source scripts/bench-args.sh "$@"
#   --images N  --runs R  --work DIR  --bin DIR (measure the build in DIR instead of building
#   build/release: an older build, to compare before and after a change)  --out DIR (the scripts
#   whose output is large: where it goes, e.g. /dev/shm; they default it to the work folder)
while (($#)); do
  case $1 in
    --images) images=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $usage" >&2; exit 2 ;;
  esac
done
scripts/install-deps.sh
if [[ -z $bin ]]; then
  scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release
  bin=build/release
fi
