#!/usr/bin/env bash
# Installs the Debian 12 packages shardpack builds and tests with, and s3rver from npm (below).
# Idempotent: installs only what is missing, and does nothing (not even `apt-get update`) when
# everything is present.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git clang clang-format libclang-rt-14-dev
  libarchive-dev liblmdb-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev libwebp-dev
  libopencv-dev libtbb-dev libcli11-dev libzstd-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libxxhash-dev libcurl4-openssl-dev nginx-light
  python3 python3-dev pybind11-dev libdlpack-dev python3-pytest python3-pytest-timeout python3-numpy python3-torch
  python3-torchvision python3-pil python3-lmdb python3-zstandard python3-venv python3-pip python3-setuptools python3-wheel tar time
  python3-botocore awscli
  slurm-wlm munge shellcheck chromium-headless-shell
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

# s3rver, the S3-protocol server of tests/interop/s3_dataset_test.py, from npm (the machines come
# with nodejs 20 and its npm; Debian's npm package conflicts with them), into build/npm.
cd "$(dirname "$0")/.."
s3rver_version=3.7.1
if [[ ! -x build/npm/node_modules/.bin/s3rver ]] && command -v npm >/dev/null; then
  echo "install-deps: installing s3rver $s3rver_version from npm into build/npm"
  npm install --prefix build/npm --no-audit --no-fund --silent "s3rver@$s3rver_version"
fi
