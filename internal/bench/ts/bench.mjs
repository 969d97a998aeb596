// Measures MCP servers through the TypeScript SDK client, which most MCP
// clients are built on: deskhand serve, and the peer computer-use-mcp
// when it is installed. Prints `BENCH <name> <value> <unit>` lines
// (medians) and `NOTE <text>` lines; it asserts no timings.
//
// Environment: DESKHAND_CMD, a JSON array (the deskhand serve command
// line); DESKHAND_APPS, a JSON array of the apps to request; PEER_MAIN,
// the peer's entry script, if it installed; MOVE_RUNS, SHOT_RUNS;
// CHANGE_PIPES, set when file descriptors 3 and 4 are pipes to the Go
// test: a byte written to 3 asks it to change a small window on the
// screen, and its byte back on 4 says the change is drawn.
import { spawn } from 'node:child_process';
import { readSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const moveRuns = Number(process.env.MOVE_RUNS || 300);
const shotRuns = Number(process.env.SHOT_RUNS || 50);

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function report(name, value, unit) {
  console.log(`BENCH ${name} ${value.toFixed(3)} ${unit}`);
}

async function connect(command, args) {
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
  const client = new Client({ name: 'deskhand-bench-ts', version: '1' });
  await client.connect(transport);
  return client;
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) {
    const text = (res.content || []).map((c) => c.text || '').join(' ');
    throw new Error(`${name} ${JSON.stringify(args)}: ${text}`);
  }
  return res;
}

async function timeIt(n, fn) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    await fn(i);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(samples);
}

// Over the bare desktop strip at the bottom left, in screenshot pixels.
const spot = (i) => [40 + (i % 200), 760 + (i % 40)];

async function benchDeskhand() {
  const [command, ...args] = JSON.parse(process.env.DESKHAND_CMD);
  const client = await connect(command, args);
  await call(client, 'request_access', { apps: JSON.parse(process.env.DESKHAND_APPS), reason: 'benchmark' });
  for (let i = 0; i < 5; i++) await call(client, 'screenshot', {});
  let bytes = 0;
  report('ts_deskhand_screenshot_ms', await timeIt(shotRuns, async () => {
    const res = await call(client, 'screenshot', {});
    bytes = res.content.filter((c) => c.type === 'image').reduce((n, c) => n + c.data.length, 0);
  }), 'ms');
  report('ts_deskhand_screenshot_base64_bytes', bytes, 'bytes');
  if (process.env.CHANGE_PIPES) {
    // The screen changes before each of these (outside the timing), so
    // the helper reads, scales and encodes every one: an unchanged
    // screen's last image is served again, as above.
    const samples = [];
    const ack = Buffer.alloc(1);
    for (let i = 0; i < shotRuns; i++) {
      writeSync(3, 'c');
      readSync(4, ack);
      const start = process.hrtime.bigint();
      await call(client, 'screenshot', {});
      samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    report('ts_deskhand_screenshot_changed_ms', median(samples), 'ms');
  }
  report('ts_deskhand_mouse_move_ms', await timeIt(moveRuns, (i) => call(client, 'mouse_move', { coordinate: spot(i) })), 'ms');
  await client.close();
}

// rawClient speaks JSON-RPC over the server's stdio with no SDK, so the
// SDK's own share of a call (its schema checks of the result) shows.
async function rawClient(command, args) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
  const pending = new Map();
  let nextId = 1;
  let parseMs = 0;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const start = process.hrtime.bigint();
    const msg = JSON.parse(line);
    parseMs = Number(process.hrtime.bigint() - start) / 1e6;
    const p = pending.get(msg.id);
    if (p) {
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(JSON.stringify(msg.error)));
      else p.resolve(msg.result);
    }
  });
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'deskhand-bench-raw', version: '1' } });
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  return {
    call: async (name, args) => {
      const res = await request('tools/call', { name, arguments: args });
      if (res.isError) throw new Error(`${name}: ${JSON.stringify(res.content)}`);
      return res;
    },
    lastParseMs: () => parseMs,
    close: () => { child.stdin.end(); },
  };
}

// benchRawDeskhand splits a screenshot's time on the client: the whole
// call with no SDK, the JSON parse of the answer, and the SDK's base64
// check of the image (atob over the data).
async function benchRawDeskhand() {
  const [command, ...args] = JSON.parse(process.env.DESKHAND_CMD);
  const raw = await rawClient(command, args);
  await raw.call('request_access', { apps: JSON.parse(process.env.DESKHAND_APPS), reason: 'benchmark' });
  for (let i = 0; i < 5; i++) await raw.call('screenshot', {});
  const parse = [];
  const atobMs = [];
  report('ts_raw_jsonrpc_screenshot_ms', await timeIt(shotRuns, async () => {
    const res = await raw.call('screenshot', {});
    parse.push(raw.lastParseMs());
    const img = res.content.find((c) => c.type === 'image');
    const start = process.hrtime.bigint();
    atob(img.data);
    atobMs.push(Number(process.hrtime.bigint() - start) / 1e6);
  }), 'ms');
  report('ts_raw_json_parse_screenshot_ms', median(parse), 'ms');
  report('ts_sdk_base64_check_screenshot_ms', median(atobMs), 'ms');
  report('ts_raw_jsonrpc_mouse_move_ms', await timeIt(moveRuns, (i) => raw.call('mouse_move', { coordinate: spot(i) })), 'ms');
  raw.close();
}

async function benchPeer() {
  const main = process.env.PEER_MAIN;
  if (!main) {
    console.log('NOTE computer-use-mcp is not installed; not measured');
    return;
  }
  let client;
  try {
    client = await connect(process.execPath, [main]);
    await call(client, 'computer', { action: 'mouse_move', coordinate: spot(0) });
  } catch (err) {
    console.log(`NOTE computer-use-mcp does not run here: ${String(err.message || err).split('\n')[0]}`);
    if (client) await client.close();
    return;
  }
  report('ts_peer_mouse_move_ms', await timeIt(moveRuns, (i) => call(client, 'computer', { action: 'mouse_move', coordinate: spot(i) })), 'ms');
  // Its get_screenshot sleeps a second first, by design; a few suffice.
  report('ts_peer_screenshot_ms', await timeIt(5, () => call(client, 'computer', { action: 'get_screenshot' })), 'ms');
  await client.close();
}

await benchDeskhand();
await benchRawDeskhand();
await benchPeer();
