#!/usr/bin/env bash
# Installs what shardpack builds and tests with: the Debian 12 packages below, then one virtual
# environment for the Python side, build/venv, made with Debian's python3 from the pinned
# requirements.txt (PyPI; torch's CPU build from this machine kind's disk; see that file).
# Idempotent and quick when everything is present: no `apt-get update` when no package is missing,
# and no pip run when build/venv was made from this very requirements.txt (its checksum is kept in
# build/venv/requirements.sha256); when the file changed, build/venv is made anew, so that no
# package the file no longer lists stays behind. Nothing already on the machine is relied on: every package the
# scripts use is in this list.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config git clang clang-format libclang-rt-14-dev
  libarchive-dev liblmdb-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev libwebp-dev
  libopencv-dev libtbb-dev libcli11-dev libzstd-dev zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libxxhash-dev libcurl4-openssl-dev nginx-light
  python3 python3-dev python3-venv pybind11-dev libdlpack-dev tar time
  slurm-wlm munge shellcheck chromium-headless-shell
  libavdevice59  # (with the FFmpeg 5 it pulls in: SPDL's decoder, for scripts/bench-peers.sh)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The virtual environment. Debian's interpreter, not the first python3 on PATH: the one this script
# installs, with the headers (python3-dev) the module is compiled against.
venv=build/venv
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [[ ! -x $venv/bin/python || "$(cat "$venv/requirements.sha256" 2>/dev/null)" != "$want" ]]; then
  echo "install-deps: making $venv from requirements.txt"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  # --no-deps: the file lists every package (see its head). The machine's pip settings name local
  # package folders that may be absent; pip's warnings about those are left out of the log.
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet --no-deps -r requirements.txt \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  echo "$want" >"$venv/requirements.sha256"
fi
