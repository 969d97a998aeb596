// deskhand example harness: runs a task with Claude (the computer toolset)
// or an OpenAI model (the computer tool) on this desktop through deskhand.
//
// Usage:
//
//   ANTHROPIC_API_KEY=... node dist/main.js anthropic MODEL "TASK" [APP...]
//   OPENAI_API_KEY=... node dist/main.js openai MODEL "TASK" [APP...]
//
// APPs are the apps the model may use (request_access); deskhand asks the
// user to approve them. DESKHAND names the deskhand binary (default:
// deskhand on PATH).

import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";

import { connectDeskhand } from "./deskhand.js";
import { runAnthropic, runOpenAI } from "./loop.js";

async function main(argv: string[]): Promise<number> {
  const [vendor, model, task, ...apps] = argv;
  if ((vendor !== "anthropic" && vendor !== "openai") || !model || !task) {
    console.error('usage: node dist/main.js anthropic|openai MODEL "TASK" [APP...]');
    return 2;
  }
  const bin = process.env.DESKHAND ?? "deskhand";
  const command = vendor === "openai" ? [bin, "serve", "--tool-profile", "openai", "--image-preset", "openai"] : [bin, "serve"];
  const mcp = await connectDeskhand({ command, apps, reason: task });
  const log = (line: string) => console.error(line);
  try {
    const opts = { model, task, maxTurns: 50, log };
    const answer = vendor === "anthropic" ? await runAnthropic(new Anthropic(), mcp, opts) : await runOpenAI(new OpenAI(), mcp, opts);
    console.log(answer);
    return 0;
  } finally {
    await mcp.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
