// Forwarding between the model vendors' computer tools and deskhand.
//
// Anthropic: deskhand's tools are the member tools of
// computer_toolset_20260801, with the same names and arguments, so each
// tool_use block becomes one tools/call unchanged, and the MCP result's
// content (an image and text) becomes the tool_result's content.
//
// OpenAI: deskhand serves one computer tool (serve --tool-profile openai)
// that takes a computer_call's actions as they are and answers with a
// screenshot, which becomes the computer_call_output.

import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

type ToolResultBlockParam = Anthropic.Messages.ToolResultBlockParam;
type ComputerCall = OpenAI.Responses.ResponseComputerToolCall;
type ComputerCallOutput = OpenAI.Responses.ResponseInputItem.ComputerCallOutput;

/** One MCP content block, as tools/call returns it. */
type McpContent =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: string; [key: string]: unknown };

interface McpResult {
  content?: McpContent[];
  isError?: boolean;
}

const imageTypes = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const;
type ImageType = (typeof imageTypes)[number];

function isImageType(t: string): t is ImageType {
  return (imageTypes as readonly string[]).includes(t);
}

/** The tool_use blocks of the computer toolset in a message. */
export function computerToolUses(message: Anthropic.Messages.Message): Anthropic.Messages.ToolUseBlock[] {
  return message.content.filter(
    (b): b is Anthropic.Messages.ToolUseBlock =>
      b.type === "tool_use" && (b as { toolset_name?: string }).toolset_name === "computer",
  );
}

/**
 * Runs each computer tool_use block of message on deskhand, in order, and
 * returns the tool_result blocks for the next user turn. A call that fails
 * is a tool_result with is_error, as the API expects; the rest of the turn
 * still gets its results, each saying it was skipped.
 */
export async function forwardAnthropic(mcp: Client, message: Anthropic.Messages.Message): Promise<ToolResultBlockParam[]> {
  const results: ToolResultBlockParam[] = [];
  let failed = "";
  for (const use of computerToolUses(message)) {
    if (failed) {
      results.push({
        type: "tool_result",
        tool_use_id: use.id,
        toolset_name: "computer",
        is_error: true,
        content: `Not run: ${failed} failed earlier in this turn. Take a screenshot to see the current state.`,
      });
      continue;
    }
    const res = (await mcp.callTool({ name: use.name, arguments: use.input as Record<string, unknown> })) as McpResult;
    const block: ToolResultBlockParam = {
      type: "tool_result",
      tool_use_id: use.id,
      toolset_name: "computer",
      content: toAnthropicContent(res),
    };
    if (res.isError) {
      block.is_error = true;
      failed = use.name;
    }
    results.push(block);
  }
  return results;
}

function toAnthropicContent(res: McpResult): Anthropic.Messages.ToolResultBlockParam["content"] {
  const out: Array<Anthropic.Messages.TextBlockParam | Anthropic.Messages.ImageBlockParam> = [];
  for (const c of res.content ?? []) {
    if (c.type === "text" && typeof c.text === "string") {
      out.push({ type: "text", text: c.text });
    } else if (c.type === "image" && typeof c.data === "string" && typeof c.mimeType === "string" && isImageType(c.mimeType)) {
      out.push({ type: "image", source: { type: "base64", media_type: c.mimeType, data: c.data } });
    }
  }
  return out;
}

/** The computer_call items of a response. */
export function computerCalls(response: OpenAI.Responses.Response): ComputerCall[] {
  return response.output.filter((item): item is ComputerCall => item.type === "computer_call");
}

/** What a forwarded computer_call did: its output, and deskhand's report. */
export interface ForwardedCall {
  output: ComputerCallOutput;
  isError: boolean;
  report: string;
}

/**
 * Runs each computer_call of response on deskhand and returns the
 * computer_call_output items for the next request. deskhand's computer
 * tool returns a screenshot even when an action fails; the failure is in
 * its report, which the harness shows (the output item has no room for
 * text). Pending safety checks are not acknowledged here: a harness must
 * show them to the user first.
 */
export async function forwardOpenAI(mcp: Client, response: OpenAI.Responses.Response): Promise<ForwardedCall[]> {
  const out: ForwardedCall[] = [];
  for (const call of computerCalls(response)) {
    if (call.pending_safety_checks.length > 0) {
      throw new Error(
        `computer_call ${call.call_id} has pending safety checks (${call.pending_safety_checks.map((c) => c.code ?? c.id).join(", ")}); ask the user before acknowledging them`,
      );
    }
    const actions = call.actions ?? (call.action ? [call.action] : []);
    const res = (await mcp.callTool({ name: "computer", arguments: { actions } })) as McpResult;
    const image = (res.content ?? []).find((c): c is { type: "image"; data: string; mimeType: string } => c.type === "image");
    if (!image) {
      throw new Error(`deskhand returned no screenshot for computer_call ${call.call_id}: ${reportOf(res)}`);
    }
    out.push({
      output: {
        type: "computer_call_output",
        call_id: call.call_id,
        output: { type: "computer_screenshot", image_url: `data:${image.mimeType};base64,${image.data}` },
      },
      isError: res.isError === true,
      report: reportOf(res),
    });
  }
  return out;
}

function reportOf(res: McpResult): string {
  return (res.content ?? [])
    .filter((c): c is { type: "text"; text: string } => c.type === "text")
    .map((c) => c.text)
    .slice(0, 1)
    .join("\n");
}
