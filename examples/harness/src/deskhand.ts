// Connecting to deskhand over MCP stdio and asking for access.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export interface DeskhandOptions {
  /** The deskhand command line, such as ["deskhand", "serve"]. */
  command: string[];
  /** The apps to ask access to (request_access), such as ["zenity"]. */
  apps: string[];
  reason: string;
}

/**
 * Starts deskhand, connects to it and calls request_access for the apps:
 * nothing can be seen or used before. The user approves them in a dialog,
 * or they are pre-approved (deskhand serve --allow APP).
 */
export async function connectDeskhand(opts: DeskhandOptions): Promise<Client> {
  const [command, ...args] = opts.command;
  if (!command) {
    throw new Error("no deskhand command given");
  }
  // deskhand needs DISPLAY and the rest of the environment, which the MCP
  // SDK does not pass on by default.
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  const transport = new StdioClientTransport({ command, args, env, stderr: "inherit" });
  const client = new Client({ name: "deskhand-example-harness", version: "0.1.0" });
  await client.connect(transport);
  if (opts.apps.length > 0) {
    const res = await client.callTool({ name: "request_access", arguments: { apps: opts.apps, reason: opts.reason } });
    if (res.isError) {
      await client.close();
      const text = (res.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("\n");
      throw new Error(`request_access was refused: ${text}`);
    }
  }
  return client;
}
