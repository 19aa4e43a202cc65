#!/usr/bin/env bash
# The benchmarks' image trees: generates DIR with BIN/tests/make_image_tree and its ARGS (plus
# --jobs for every core) unless an earlier run finished it. A tree is marked complete (DIR/.complete)
# only once every image is written, so an interrupted generation starts over rather than leaving a
# benchmark a partial tree.
#
#   scripts/bench-tree.sh BIN DIR MAKE_IMAGE_TREE_ARGS...
set -euo pipefail
bin=$1 dir=$2
shift 2
[[ -f $dir/.complete ]] && exit 0
echo "generating $dir ($*) ..." >&2
rm -rf "$dir"
"$bin/tests/make_image_tree" "$dir" "$@" --jobs "$(nproc)" >/dev/null
touch "$dir/.complete"
