// The agent loops: ask the model, forward its computer calls to deskhand,
// send the results back, until the model stops calling the computer.

import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

import { computerCalls, computerToolUses, forwardAnthropic, forwardOpenAI } from "./forward.js";

export interface LoopOptions {
  model: string;
  task: string;
  /** Most model turns before giving up. */
  maxTurns: number;
  log: (line: string) => void;
}

/** Runs task with Claude and the computer toolset; returns its last text. */
export async function runAnthropic(anthropic: Anthropic, mcp: Client, opts: LoopOptions): Promise<string> {
  const messages: Anthropic.Messages.MessageParam[] = [{ role: "user", content: opts.task }];
  for (let turn = 0; turn < opts.maxTurns; turn++) {
    const message = await anthropic.messages.create({
      model: opts.model,
      max_tokens: 4096,
      tools: [{ type: "computer_toolset_20260801" }],
      messages,
    });
    messages.push({ role: "assistant", content: message.content as Anthropic.Messages.ContentBlockParam[] });
    const uses = computerToolUses(message);
    if (uses.length === 0) {
      return textOf(message);
    }
    opts.log(`turn ${turn + 1}: ${uses.map((u) => `${u.name} ${JSON.stringify(u.input)}`).join("; ")}`);
    messages.push({ role: "user", content: await forwardAnthropic(mcp, message) });
  }
  throw new Error(`the task did not finish in ${opts.maxTurns} turns`);
}

function textOf(message: Anthropic.Messages.Message): string {
  return message.content
    .filter((b): b is Anthropic.Messages.TextBlock => b.type === "text")
    .map((b) => b.text)
    .join("\n");
}

/** Runs task with an OpenAI model and the computer tool; returns its last text. */
export async function runOpenAI(openai: OpenAI, mcp: Client, opts: LoopOptions): Promise<string> {
  let response = await openai.responses.create({
    model: opts.model,
    tools: [{ type: "computer" }],
    input: opts.task,
  });
  for (let turn = 0; turn < opts.maxTurns; turn++) {
    const calls = computerCalls(response);
    if (calls.length === 0) {
      return response.output_text;
    }
    const forwarded = await forwardOpenAI(mcp, response);
    for (const f of forwarded) {
      opts.log(`turn ${turn + 1}: ${f.isError ? "stopped: " : ""}${f.report}`);
    }
    response = await openai.responses.create({
      model: opts.model,
      tools: [{ type: "computer" }],
      previous_response_id: response.id,
      input: forwarded.map((f) => f.output),
    });
  }
  throw new Error(`the task did not finish in ${opts.maxTurns} turns`);
}
