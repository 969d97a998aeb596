#!/usr/bin/env bash
# Builds, signs and packs the macOS capture helper; `make macos-helper` runs
# it. Needs macOS 14+ with Xcode 15+ (Swift 5.9). This project's CI runs on
# Linux and never runs this script: see README.md, "What CI checks".
#
# Environment:
#   DESKHAND_SIGN_IDENTITY  codesign identity, e.g. "Developer ID Application:
#                           Jane Doe (TEAMID)"; default "-" (ad-hoc: runs on
#                           this Mac, but TCC grants do not survive a rebuild)
#   DESKHAND_NOTARY_PROFILE notarytool keychain profile; when set, the zip is
#                           submitted for notarization and the script waits
#   DESKHAND_MACOS_OUT      output directory; default bin/macos
#
# Output: $DESKHAND_MACOS_OUT/deskhand-helper (universal arm64 + x86_64,
# signed, hardened runtime, Info.plist embedded) and
# $DESKHAND_MACOS_OUT/deskhand-helper-<version>-macos.zip (for notarytool).
set -euo pipefail

cd "$(dirname "$0")/../.."
root=$(pwd)
here=helpers/macos

if [[ "$(uname -s)" != Darwin ]]; then
  echo "macos-helper: this needs macOS 14+ with Xcode 15+ (Swift 5.9); this machine runs $(uname -s)." >&2
  echo "macos-helper: on Linux, \`make lint\` parses the Swift sources instead." >&2
  exit 1
fi

identity=${DESKHAND_SIGN_IDENTITY:--}
out=${DESKHAND_MACOS_OUT:-bin/macos}
plist=$here/Info.plist
entitlements=$here/deskhand-helper.entitlements

bundle_id=$(/usr/libexec/PlistBuddy -c 'Print :CFBundleIdentifier' "$plist")
version=$(/usr/libexec/PlistBuddy -c 'Print :CFBundleShortVersionString' "$plist")
source_version=$(sed -n 's/^let helperVersion = "\(.*\)"$/\1/p' "$here/Sources/deskhand-helper/main.swift")
if [[ "$version" != "$source_version" ]]; then
  echo "macos-helper: Info.plist says version $version but main.swift says $source_version; make them agree" >&2
  exit 1
fi

echo "==> building deskhand-helper $version ($bundle_id), universal"
build=(swift build -c release --product deskhand-helper --arch arm64 --arch x86_64)
"${build[@]}"
bin_dir=$("${build[@]}" --show-bin-path)
mkdir -p "$out"
rm -f "$out/deskhand-helper"
cp "$bin_dir/deskhand-helper" "$out/deskhand-helper"
binary=$out/deskhand-helper

# The Info.plist must be inside the binary (Package.swift links it in with
# -sectcreate __TEXT __info_plist); without it TCC has no bundle id to keep
# the grants on.
for arch in arm64 x86_64; do
  if ! otool -arch "$arch" -s __TEXT __info_plist "$binary" | grep -q '^[0-9a-f]'; then
    echo "macos-helper: $binary ($arch) has no __TEXT,__info_plist section" >&2
    exit 1
  fi
done

echo "==> signing with ${identity} (hardened runtime)"
timestamp=--timestamp
[[ "$identity" == "-" ]] && timestamp=--timestamp=none
codesign --force --sign "$identity" --identifier "$bundle_id" --options runtime "$timestamp" \
  --entitlements "$entitlements" "$binary"
codesign --verify --strict --verbose=2 "$binary"
details=$(codesign --display --verbose=2 "$binary" 2>&1)
echo "$details" | grep -E '^(Identifier|Format|CodeDirectory|Authority|TeamIdentifier|Info.plist)' || true
if ! echo "$details" | grep -q "^Identifier=$bundle_id\$"; then
  echo "macos-helper: the signature's identifier is not $bundle_id" >&2
  exit 1
fi
if ! echo "$details" | grep -q '^Info.plist entries='; then
  echo "macos-helper: codesign does not see the embedded Info.plist" >&2
  exit 1
fi

"$binary" --version

echo "==> packing"
zip=$out/deskhand-helper-$version-macos.zip
rm -f "$zip"
ditto -c -k --keepParent "$binary" "$zip"
shasum -a 256 "$binary" "$zip"

if [[ -n "${DESKHAND_NOTARY_PROFILE:-}" ]]; then
  if [[ "$identity" == "-" ]]; then
    echo "macos-helper: notarization needs a Developer ID identity, not ad-hoc signing" >&2
    exit 1
  fi
  echo "==> notarizing with profile $DESKHAND_NOTARY_PROFILE"
  xcrun notarytool submit "$zip" --keychain-profile "$DESKHAND_NOTARY_PROFILE" --wait
  # A bare Mach-O cannot carry a stapled ticket; Gatekeeper looks the
  # ticket up online on first launch.
  spctl --assess --type install --verbose=2 "$binary" || true
fi

echo "==> done: $root/$binary"
