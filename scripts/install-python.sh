#!/usr/bin/env bash
# Builds the shardpack Python package and installs it into a virtual environment, creating it
# (with Debian's python3-numpy and python3-torch visible) when it does not exist:
#   scripts/install-python.sh .venv && .venv/bin/python -c 'import shardpack'
# The package is built for Debian's /usr/bin/python3, so the environment must use that interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:?usage: scripts/install-python.sh VENV}
scripts/install-deps.sh
scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release
if [[ ! -x "$venv/bin/python" ]]; then
  # --without-pip: Debian's python3 lacks ensurepip unless python3-venv is installed.
  /usr/bin/python3 -m venv --system-site-packages --without-pip "$venv"
fi
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
rm -rf "$site/shardpack"
cp -r build/release/python/shardpack "$site/"
"$venv/bin/python" -c 'import shardpack; print("shardpack", shardpack.__version__, "installed in", shardpack.__file__)'
