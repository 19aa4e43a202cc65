#!/usr/bin/env bash
# Installs the shardpack Python package into a virtual environment with pip, creating the
# environment (with Debian's python3-numpy and python3-torch visible) when it does not exist:
#   scripts/install-python.sh .venv && .venv/bin/python -c 'import shardpack'
# The same as `pip install --no-build-isolation .` in that environment (pyproject.toml, setup.py),
# reusing the Release build in build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:?usage: scripts/install-python.sh VENV}
scripts/install-deps.sh
scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release
if [[ ! -x "$venv/bin/pip" ]]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
SHARDPACK_BUILD_DIR=$PWD/build/release PIP_NO_INDEX=1 "$venv/bin/pip" install --quiet --no-build-isolation .
"$venv/bin/python" -c 'import shardpack; print("shardpack", shardpack.__version__, "installed in", shardpack.__file__)'
