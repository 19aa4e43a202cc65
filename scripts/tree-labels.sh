#!/usr/bin/env bash
# Prints, on one line, the label of every file in an image tree in the order pack takes them: files
# in sorted path order (C locale), each labelled with the rank of its folder among the sorted class
# folders. The independent reference that the install and packaging checks compare against.
#   scripts/tree-labels.sh TREE
set -euo pipefail
cd "${1:?usage: scripts/tree-labels.sh TREE}"
classes=$(ls | LC_ALL=C sort)
find . -type f | LC_ALL=C sort | while read -r f; do
  echo "$classes" | grep -nx "$(basename "$(dirname "$f")")" | cut -d: -f1
done | awk '{printf "%s%d", (NR > 1 ? " " : ""), $1 - 1} END {print ""}'
