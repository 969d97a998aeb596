// Measures MCP servers through the TypeScript SDK client, which most MCP
// clients are built on: deskhand serve, and the peer computer-use-mcp
// when it is installed. Prints `BENCH <name> <value> <unit>` lines
// (medians) and `NOTE <text>` lines; it asserts no timings.
//
// Environment: DESKHAND_CMD, a JSON array (the deskhand serve command
// line); DESKHAND_APPS, a JSON array of the apps to request; PEER_MAIN,
// the peer's entry script, if it installed; MOVE_RUNS, SHOT_RUNS.
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
  report('ts_deskhand_mouse_move_ms', await timeIt(moveRuns, (i) => call(client, 'mouse_move', { coordinate: spot(i) })), 'ms');
  await client.close();
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
await benchPeer();
