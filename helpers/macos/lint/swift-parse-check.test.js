// Tests of the Swift parse check that `make lint` runs: a broken file fails
// it with file:line:col, and the real sources pass.
//
//   node --test helpers/macos/lint/swift-parse-check.test.js
'use strict';

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const test = require('node:test');

const { checkSource } = require('./swift-parse-check.js');

const script = path.join(__dirname, 'swift-parse-check.js');
const repo = path.resolve(__dirname, '..', '..', '..');

function run(args) {
  return spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });
}

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swift-parse-check-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const good = `import Foundation

/// Swift 5.9 forms the helper uses, which the grammar must accept.
@MainActor
public final class Example<Element: Sendable>: CustomStringConvertible {
    private var items: [Element] = []
    public var description: String { "\\(items.count) items: \\(items.map { "\\($0)" }.joined(separator: ", "))" }

    public func load(_ url: URL) async throws -> [UInt8] {
        guard let data = try? Data(contentsOf: url) else { throw CocoaError(.fileNoSuchFile) }
        let text = #"raw "quoted" text"#
        if case .some(let first) = data.first, first > 0, let count = Int?(data.count) { _ = (text, count) }
        return try await Task { [UInt8](data) }.value
    }
}
`;

test('a valid file passes', () => {
  assert.deepEqual(checkSource(good), []);
});

test('a deliberately broken file fails with file:line:col', (t) => {
  const dir = tempDir(t);
  const broken = path.join(dir, 'Broken.swift');
  // Line 4 opens a parameter list that never closes; line 7 lacks a brace.
  fs.writeFileSync(
    broken,
    [
      'import Foundation',
      '',
      'struct Broken {',
      '    func handle(_ body: [UInt8] -> [UInt8] {',
      '        body',
      '    }',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(path.join(dir, 'Fine.swift'), good);
  const result = run([dir]);
  assert.equal(result.status, 1, `exit status; stderr:\n${result.stderr}`);
  assert.match(result.stderr, new RegExp(`^${escape(broken)}:\\d+:\\d+: `, 'm'));
  assert.doesNotMatch(result.stderr, /Fine\.swift/);
  assert.match(result.stderr, /1 of 2 Swift files do not parse/);
});

test('a missing token is reported as missing', () => {
  const problems = checkSource('let values = [1, 2\nlet next = 3\n');
  assert.ok(problems.length > 0, 'expected problems');
  assert.ok(
    problems.some((p) => /missing|syntax error/.test(p.message)),
    JSON.stringify(problems),
  );
  assert.ok(problems.every((p) => p.line >= 1 && p.column >= 1));
});

test('no Swift files or a missing path is a usage error', (t) => {
  const dir = tempDir(t);
  assert.equal(run([dir]).status, 2);
  assert.equal(run([path.join(dir, 'nope')]).status, 2);
  assert.equal(run([]).status, 2);
});

test('the real Swift sources parse', () => {
  const result = run([path.join(repo, 'Package.swift'), path.join(repo, 'helpers', 'macos')]);
  assert.equal(result.status, 0, result.stderr);
  const match = /(\d+) Swift files parse cleanly/.exec(result.stdout);
  assert.ok(match, result.stdout);
  // Package.swift, the core, the macOS layer, the executable and the tests.
  assert.ok(Number(match[1]) >= 25, `only ${match[1]} Swift files found`);
});

function escape(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
