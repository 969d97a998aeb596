#!/usr/bin/env node
// deskhand's npm launcher. The binaries come in one optional dependency
// per platform (@deskhand/linux-x64, ...), of which npm installs only the
// one whose os and cpu match, as esbuild and biome ship theirs. This finds
// it and runs it with stdio inherited, so an MCP client talks to deskhand
// itself; signals are passed on and deskhand's exit status is returned.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

function binaryPath() {
  // An escape hatch for platforms without a package, or a local build.
  const override = process.env.DESKHAND_BINARY_PATH;
  if (override) return override;
  const pkg = `@deskhand/${process.platform}-${process.arch}`;
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(
      `deskhand: the package ${pkg} for this platform is not installed. ` +
        'Reinstall without --no-optional / --omit=optional, or, on a platform deskhand has no package for, ' +
        'build it from source and set DESKHAND_BINARY_PATH to the binary.',
    );
  }
  const name = process.platform === 'win32' ? 'deskhand.exe' : 'deskhand';
  const exe = path.join(dir, 'bin', name);
  if (!fs.existsSync(exe)) {
    throw new Error(`deskhand: ${pkg} has no bin/${name} (looked at ${exe}); reinstall deskhand`);
  }
  return exe;
}

let exe;
try {
  exe = binaryPath();
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}

const child = spawn(exe, process.argv.slice(2), { stdio: 'inherit' });
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
for (const sig of forwarded) {
  process.on(sig, () => child.kill(sig));
}
child.on('error', (err) => {
  process.stderr.write(`deskhand: starting ${exe}: ${err.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    // Die of the same signal, so the caller sees what deskhand saw.
    for (const sig of forwarded) process.removeAllListeners(sig);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
