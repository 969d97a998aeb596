#!/usr/bin/env bash
# Builds and tests the Swift helper's portable core on Linux: `swift build`
# and `swift test` of Package.swift's Linux branch, run in a Debian trixie
# root that has swiftlang 6.0 (Debian 12 itself has no Swift). Called by
# `make swift-test`.
#
# The root is made once per machine with debootstrap (about 3 minutes and
# 2.7 GB) and kept in DESKHAND_SWIFT_ROOT (default
# /var/cache/deskhand/swift-trixie), with the build directory beside it, so
# later runs only compile what changed. Needs root (debootstrap, chroot and
# the bind mounts).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
root=${DESKHAND_SWIFT_ROOT:-/var/cache/deskhand/swift-trixie}
mirror=${DESKHAND_DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [[ $(id -u) -ne 0 ]]; then
  echo "swift.sh: the Swift tests run in a chroot and need root (sudo make swift-test)" >&2
  exit 1
fi

mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9

mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount -l "${mounts[i]}" 2>/dev/null || true
  done
}
trap cleanup EXIT

bind() { # bind SOURCE TARGET
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounts+=("$2")
}

if [[ ! -e $root/.ready ]]; then
  if ! command -v debootstrap >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >&2
  fi
  echo "swift.sh: making the Debian trixie root with swiftlang in $root (once per machine)" >&2
  rm -rf "$root.tmp"
  debootstrap --variant=minbase trixie "$root.tmp" "$mirror" >&2
  mount -t proc proc "$root.tmp/proc"
  mounts+=("$root.tmp/proc")
  bind /dev "$root.tmp/dev"
  chroot "$root.tmp" /bin/sh -c 'apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends swiftlang libc6-dev >/dev/null &&
    apt-get clean' >&2
  cleanup
  mounts=()
  mv "$root.tmp" "$root"
  touch "$root/.ready"
fi

# Swift needs /proc to load its runtime. The repository is mounted at /src
# and the build directory kept at /build, both fixed paths, so the build
# cache stays valid from one clone to the next.
mount -t proc proc "$root/proc"
mounts+=("$root/proc")
bind /dev "$root/dev"
bind "$repo" "$root/src"
mkdir -p "$root/build"

# Warnings are errors: the core is kept clean under Swift 6's complete
# concurrency checking.
chroot "$root" /bin/sh -c 'cd /src && swift build --scratch-path /build -Xswiftc -warnings-as-errors &&
  swift test --scratch-path /build -Xswiftc -warnings-as-errors'
