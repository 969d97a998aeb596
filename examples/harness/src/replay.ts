// Replays model responses from a fixture through the real vendor SDKs and
// the real forwarding code, against a real deskhand, with no network and
// no API key: the SDK clients get a fetch that answers each request with
// the fixture's next response and keeps the request, so a test can check
// what the harness sent back (the tool_result and computer_call_output
// items, screenshots included).
//
// Usage:
//
//   node dist/replay.js anthropic|openai FIXTURE OUT APP[,APP...] -- DESKHAND_COMMAND...
//
// OUT receives {"requests": [...], "answer": "..."}.

import { readFileSync, writeFileSync } from "node:fs";

import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";

import { connectDeskhand } from "./deskhand.js";
import { runAnthropic, runOpenAI } from "./loop.js";

interface Fixture {
  /** What the responses are and where their shape comes from. */
  about: string;
  model: string;
  task: string;
  /** The API's response bodies, in order. */
  responses: unknown[];
}

interface Recorded {
  method: string;
  path: string;
  body: unknown;
}

/** A fetch that plays the fixture's responses back, in order. */
function replayFetch(fixture: Fixture, expectPath: string, recorded: Recorded[]) {
  let next = 0;
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    recorded.push({ method: init?.method ?? "GET", path: url.pathname, body });
    if (url.pathname !== expectPath) {
      throw new Error(`the harness called ${url.pathname}, not ${expectPath}`);
    }
    if (next >= fixture.responses.length) {
      throw new Error(`request ${recorded.length} has no recorded response: the fixture has ${fixture.responses.length}`);
    }
    const payload = JSON.stringify(fixture.responses[next++]);
    return new Response(payload, { status: 200, headers: { "content-type": "application/json", "request-id": `replay-${next}` } });
  };
}

async function main(argv: string[]): Promise<number> {
  const sep = argv.indexOf("--");
  const [vendor, fixturePath, outPath, appList] = argv.slice(0, sep);
  const command = argv.slice(sep + 1);
  if (sep < 0 || (vendor !== "anthropic" && vendor !== "openai") || !fixturePath || !outPath || appList === undefined || command.length === 0) {
    console.error("usage: node dist/replay.js anthropic|openai FIXTURE OUT APP[,APP...] -- DESKHAND_COMMAND...");
    return 2;
  }
  const fixture = JSON.parse(readFileSync(fixturePath, "utf8")) as Fixture;
  const recorded: Recorded[] = [];
  const apps = appList.split(",").filter((a) => a !== "");
  const mcp = await connectDeskhand({ command, apps, reason: fixture.task });
  const opts = { model: fixture.model, task: fixture.task, maxTurns: fixture.responses.length, log: (l: string) => console.error(l) };
  // No key exists here, and none is needed: nothing leaves the process.
  const offline = { apiKey: "replay-no-key", maxRetries: 0 };
  let answer: string;
  try {
    if (vendor === "anthropic") {
      const fetch = replayFetch(fixture, "/v1/messages", recorded);
      answer = await runAnthropic(new Anthropic({ ...offline, fetch }), mcp, opts);
    } else {
      const fetch = replayFetch(fixture, "/v1/responses", recorded);
      answer = await runOpenAI(new OpenAI({ ...offline, fetch }), mcp, opts);
    }
  } finally {
    await mcp.close();
  }
  writeFileSync(outPath, JSON.stringify({ requests: recorded, answer }, null, 1));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
