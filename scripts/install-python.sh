#!/usr/bin/env bash
# Installs the shardpack Python package into a virtual environment with pip, creating the
# environment (from Debian's python3, as build/venv is) when it does not exist:
#   scripts/install-python.sh .venv && .venv/bin/python -c 'import shardpack'
# The same as `pip install .` in that environment (pyproject.toml, setup.py; numpy from PyPI),
# reusing the Release build in build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:?usage: scripts/install-python.sh VENV}
scripts/install-deps.sh
scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release
if [[ ! -x "$venv/bin/pip" ]]; then
  /usr/bin/python3 -m venv "$venv"
fi
SHARDPACK_BUILD_DIR=$PWD/build/release "$venv/bin/pip" install --quiet .
"$venv/bin/python" -c 'import shardpack; print("shardpack", shardpack.__version__, "installed in", shardpack.__file__)'
