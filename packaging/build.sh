#!/usr/bin/env bash
# Builds deskhand's distributable packages into $OUT (default dist/):
#   $OUT/bin/<os>-<cpu>/        the binaries of each platform
#   $OUT/npm/*.tgz              the npm launcher `deskhand` and one
#                               @deskhand/<os>-<cpu> package per platform
#   $OUT/deskhand-<version>.mcpb the MCP Bundle, validated and packed with
#                               the official mcpb CLI
# Usage: packaging/build.sh   (from the repository root, after `make build`)
# Environment: OUT, PLATFORMS (space-separated <os>-<cpu> names from
# packaging/npm/platforms.json; default: every one this machine can build),
# HELPER (the release-mode Linux x64 helper; default bin/deskhand-helper),
# MCPB (the mcpb CLI; default the one pinned in packaging/tools).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-dist}
HELPER=${HELPER:-bin/deskhand-helper}
MCPB=${MCPB:-packaging/tools/node_modules/.bin/mcpb}
VERSION=$(sed -n 's/^var Version = "\(.*\)"$/\1/p' supervisor/supervisor.go)
if [[ -z $VERSION ]]; then
  echo "build.sh: no 'var Version = \"...\"' line in supervisor/supervisor.go" >&2
  exit 1
fi
host="$(go env GOOS)-$(go env GOARCH)"

# Which platforms this machine can build. Linux needs cgo (robotgo's X11
# input) and the Rust helper, so only the host's Linux builds here unless
# a cross toolchain is set up; macOS builds without cgo, but its Swift
# helper needs Xcode, so the macOS packages carry deskhand alone and it
# installs its verified helper on first use.
# Windows builds without cgo, helper included (Go, helpers/windows).
default_platforms="darwin-arm64 darwin-x64"
[[ $host == linux-amd64 ]] && default_platforms="linux-x64 $default_platforms"
[[ -d helpers/windows ]] && default_platforms="$default_platforms win32-x64"
PLATFORMS=${PLATFORMS:-$default_platforms}

rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/npm"
platform_field() { # platform_field <os>-<cpu> <field>
  node -e '
    const [want, field] = process.argv.slice(1);
    const p = require("./packaging/npm/platforms.json").find((p) => `${p.os}-${p.cpu}` === want);
    if (!p) { console.error(`build.sh: no platform ${want} in packaging/npm/platforms.json`); process.exit(1); }
    console.log(p[field]);' "$1" "$2"
}

for plat in $PLATFORMS; do
  goos=$(platform_field "$plat" goos)
  goarch=$(platform_field "$plat" goarch)
  dir="$OUT/bin/$plat"
  mkdir -p "$dir"
  cgo=0
  [[ $goos == linux ]] && cgo=1
  exe=""
  [[ $goos == windows ]] && exe=.exe
  echo "build.sh: deskhand $VERSION for $plat" >&2
  GOOS=$goos GOARCH=$goarch CGO_ENABLED=$cgo go build -trimpath -o "$dir/deskhand$exe" ./cmd/deskhand
  if [[ $goos == windows ]]; then
    GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go build -trimpath -o "$dir/deskhand-helper.exe" ./helpers/windows
    (cd "$dir" && sha256sum deskhand-helper.exe > SHA256SUMS)
  elif [[ $(platform_field "$plat" helper) == true ]]; then
    if [[ $plat != linux-x64 ]]; then
      echo "build.sh: no way to build the $plat helper here; set PLATFORMS without $plat" >&2
      exit 1
    fi
    [[ -x $HELPER ]] || { echo "build.sh: no helper at $HELPER; run make build first" >&2; exit 1; }
    install -m 0755 "$HELPER" "$dir/deskhand-helper"
    # deskhand verifies a helper found beside it against this list.
    (cd "$dir" && sha256sum deskhand-helper > SHA256SUMS)
  fi
done

# npm: one package per platform, and the launcher that depends on them all.
for plat in $PLATFORMS; do
  pkg="$OUT/npm/stage/$plat"
  mkdir -p "$pkg/bin"
  cp -p "$OUT/bin/$plat"/* "$pkg/bin/"
  node -e '
    const [plat, version, out] = process.argv.slice(1);
    const p = require("./packaging/npm/platforms.json").find((p) => `${p.os}-${p.cpu}` === plat);
    const main = require("./packaging/npm/deskhand/package.json");
    const manifest = {
      name: p.package,
      version,
      description: `The ${plat} binaries of deskhand; install the deskhand package, which picks this one.`,
      homepage: main.homepage,
      repository: main.repository,
      license: main.license,
      os: [p.os],
      cpu: [p.cpu],
      files: ["bin"],
      preferUnplugged: true,
    };
    require("fs").writeFileSync(`${out}/package.json`, JSON.stringify(manifest, null, 2) + "\n");' \
    "$plat" "$VERSION" "$pkg"
  printf '# %s\n\nThe %s binaries of [deskhand](https://www.npmjs.com/package/deskhand). Install `deskhand`; it depends on this package.\n' \
    "$(platform_field "$plat" package)" "$plat" > "$pkg/README.md"
done
main="$OUT/npm/stage/deskhand"
mkdir -p "$main"
cp -rp packaging/npm/deskhand/. "$main/"
node -e '
  const [version, out] = process.argv.slice(1);
  const fs = require("fs");
  const manifest = JSON.parse(fs.readFileSync(`${out}/package.json`));
  manifest.version = version;
  // Every platform package, built here or not: npm installs the one that
  // matches, and a platform that was not published simply has none.
  manifest.optionalDependencies = Object.fromEntries(
    require("./packaging/npm/platforms.json").map((p) => [p.package, version]));
  fs.writeFileSync(`${out}/package.json`, JSON.stringify(manifest, null, 2) + "\n");' "$VERSION" "$main"
for pkg in "$OUT"/npm/stage/*; do
  (cd "$OUT/npm" && npm pack --silent "./stage/$(basename "$pkg")" >/dev/null)
done

# The MCP Bundle: the manifest, the architecture-picking entry point, and
# each platform's binaries under server/<os>-<cpu>/.
bundle="$OUT/mcpb"
mkdir -p "$bundle/server"
node -e '
  const [version, out, built] = process.argv.slice(1);
  const fs = require("fs");
  const manifest = JSON.parse(fs.readFileSync("packaging/mcpb/manifest.json"));
  manifest.version = version;
  // The bundle claims only the operating systems it carries a build for.
  const oses = built.split(" ").map((p) => p.split("-")[0]);
  manifest.compatibility.platforms = manifest.compatibility.platforms.filter((os) => oses.includes(os));
  for (const os of Object.keys(manifest.server.mcp_config.platform_overrides)) {
    if (!oses.includes(os)) delete manifest.server.mcp_config.platform_overrides[os];
  }
  fs.writeFileSync(`${out}/manifest.json`, JSON.stringify(manifest, null, 2) + "\n");' "$VERSION" "$bundle" "$PLATFORMS"
install -m 0755 packaging/mcpb/deskhand "$bundle/server/deskhand"
for plat in $PLATFORMS; do
  cp -rp "$OUT/bin/$plat" "$bundle/server/$plat"
done
"$MCPB" validate "$bundle/manifest.json" >&2
"$MCPB" pack "$bundle" "$OUT/deskhand-$VERSION.mcpb" >&2
echo "build.sh: built $OUT/deskhand-$VERSION.mcpb and $(ls "$OUT"/npm/*.tgz | wc -l) npm tarballs for: $PLATFORMS" >&2

# The MCP Registry entry, with the bundle as a second package: its release
# URL and the SHA-256 the registry requires for mcpb packages.
node -e '
  const [version, mcpb, out] = process.argv.slice(1);
  const fs = require("fs");
  const sha = require("crypto").createHash("sha256").update(fs.readFileSync(mcpb)).digest("hex");
  const entry = JSON.parse(fs.readFileSync("packaging/registry/server.json"));
  entry.version = version;
  for (const p of entry.packages) p.version = version;
  entry.packages.push({
    registryType: "mcpb",
    identifier: `https://github.com/deskhand/deskhand/releases/download/v${version}/${require("path").basename(mcpb)}`,
    version,
    fileSha256: sha,
    transport: { type: "stdio" },
  });
  fs.writeFileSync(out, JSON.stringify(entry, null, 2) + "\n");' \
  "$VERSION" "$OUT/deskhand-$VERSION.mcpb" "$OUT/server.json"
echo "build.sh: wrote $OUT/server.json" >&2
