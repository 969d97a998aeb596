#!/usr/bin/env node
// swift-parse-check: parses Swift sources with the tree-sitter Swift grammar
// and fails on any syntax error.
//
// Usage: node swift-parse-check.js PATH...
//
// Each PATH is a .swift file or a directory searched for *.swift files
// (node_modules, .build and hidden directories are skipped). Every ERROR or
// MISSING node is printed as `file:line:col: message`, one per line, on
// stderr. Exit status: 0 when every file parses, 1 when any does not, 2 for
// a usage error (no paths, a path that does not exist, no Swift files).
//
// There is no Swift toolchain on deskhand's Linux machines, so this is the
// check that keeps helpers/macos syntactically valid between Mac builds. It
// proves syntax only: types, names and API use are checked by `swift build`
// on a Mac.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const SKIP_DIRS = new Set(['node_modules', '.build', '.swiftpm']);

let parser = null;

// The parser is created on first use so that `require` of this module (by
// the tests) works even before the grammar is needed.
function getParser() {
  if (parser === null) {
    const Parser = require('tree-sitter');
    const Swift = require('tree-sitter-swift');
    parser = new Parser();
    parser.setLanguage(Swift);
  }
  return parser;
}

// Problems in one source text: [{line, column, message}], 1-based, sorted.
function checkSource(text) {
  // The input callback avoids the binding's size limit on plain strings;
  // tree-sitter asks for text by UTF-16 offset.
  const tree = getParser().parse((index) => (index < text.length ? text.slice(index, index + 8192) : null));
  const problems = [];
  if (tree.rootNode.hasError) {
    collect(tree.rootNode, text, problems);
    if (problems.length === 0) {
      // hasError without a visible ERROR/MISSING node should not happen,
      // but never report a broken tree as clean.
      problems.push({ line: 1, column: 1, message: 'the parser reports an error it cannot place' });
    }
  }
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return problems;
}

function collect(node, text, problems) {
  if (node.isMissing) {
    problems.push(place(node.startPosition, `missing ${JSON.stringify(node.type)}`));
    return;
  }
  if (node.type === 'ERROR') {
    const snippet = text.slice(node.startIndex, Math.min(node.endIndex, node.startIndex + 40)).split('\n')[0];
    problems.push(place(node.startPosition, `syntax error near ${JSON.stringify(snippet)}`));
    // Nested errors inside an ERROR node add noise, not information.
    return;
  }
  if (!node.hasError) {
    return;
  }
  for (const child of node.children) {
    collect(child, text, problems);
  }
}

function place(position, message) {
  return { line: position.row + 1, column: position.column + 1, message };
}

// The .swift files under the given paths, sorted, or throws on a path that
// does not exist.
function swiftFiles(paths) {
  const files = [];
  const walk = (p) => {
    const stat = fs.statSync(p);
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(p, { withFileTypes: true })) {
        if (entry.isDirectory() && (SKIP_DIRS.has(entry.name) || entry.name.startsWith('.'))) {
          continue;
        }
        const child = path.join(p, entry.name);
        if (entry.isDirectory()) {
          walk(child);
        } else if (entry.isFile() && entry.name.endsWith('.swift')) {
          files.push(child);
        }
      }
    } else if (stat.isFile()) {
      files.push(p);
    }
  };
  for (const p of paths) {
    walk(p);
  }
  return [...new Set(files)].sort();
}

function main(argv) {
  if (argv.length === 0 || argv.includes('-h') || argv.includes('--help')) {
    process.stderr.write('usage: swift-parse-check.js PATH...  (.swift files or directories to search)\n');
    return argv.length === 0 ? 2 : 0;
  }
  let files;
  try {
    files = swiftFiles(argv);
  } catch (err) {
    process.stderr.write(`swift-parse-check: ${err.message}\n`);
    return 2;
  }
  if (files.length === 0) {
    process.stderr.write(`swift-parse-check: no .swift files under ${argv.join(', ')}\n`);
    return 2;
  }
  let bad = 0;
  for (const file of files) {
    const problems = checkSource(fs.readFileSync(file, 'utf8'));
    if (problems.length > 0) {
      bad++;
      for (const p of problems) {
        process.stderr.write(`${file}:${p.line}:${p.column}: ${p.message}\n`);
      }
    }
  }
  if (bad > 0) {
    process.stderr.write(`swift-parse-check: ${bad} of ${files.length} Swift files do not parse\n`);
    return 1;
  }
  process.stdout.write(`swift-parse-check: ${files.length} Swift files parse cleanly\n`);
  return 0;
}

module.exports = { checkSource, swiftFiles, main };

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}
