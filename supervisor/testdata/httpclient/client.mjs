// The TypeScript SDK's MCP client over Streamable HTTP, as a harness would
// use deskhand: it asks for access to zenity (answering the approval dialog
// it is sent as an elicitation), takes a screenshot, and clicks the screen
// point given on the command line, converted to screenshot pixels.
//
// Usage: node client.mjs URL TOKEN_FILE X Y
//
// It prints one JSON line per step on stdout and exits non-zero on the
// first failure.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, tokenFile, x, y] = process.argv.slice(2);
if (!url || !tokenFile || x === undefined || y === undefined) {
  console.error("usage: node client.mjs URL TOKEN_FILE X Y");
  process.exit(2);
}
const token = readFileSync(tokenFile, "utf8").trim();
const report = (step, data) => console.log(JSON.stringify({ step, ...data }));
const fail = (step, why) => {
  report(step, { error: why });
  process.exit(1);
};

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client(
  { name: "deskhand-ts-e2e", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);

// The user approves everything the dialog offers.
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  const props = request.params.requestedSchema?.properties ?? {};
  const content = {};
  for (const [key, prop] of Object.entries(props)) {
    if (prop.type === "boolean") content[key] = true;
  }
  report("elicitation", { message: request.params.message, fields: Object.keys(content) });
  return { action: "accept", content };
});

await client.connect(transport);
report("connected", { session: transport.sessionId, server: client.getServerVersion()?.name });

const access = await client.callTool({
  name: "request_access",
  arguments: { apps: ["zenity"], reason: "click the button of the test dialog" },
});
const accessText = access.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
report("request_access", { isError: !!access.isError, text: accessText });
if (access.isError) fail("request_access", accessText);

const shot = await client.callTool({ name: "screenshot", arguments: {} });
const image = shot.content.find((c) => c.type === "image");
const facts = JSON.parse(shot.content.filter((c) => c.type === "text").at(-1).text);
report("screenshot", { isError: !!shot.isError, mimeType: image?.mimeType, bytes: image ? Buffer.from(image.data, "base64").length : 0, image: facts.image });
if (shot.isError || !image) fail("screenshot", "no image");

// A screen point in screenshot pixels, as a model reads it off the image.
const d = facts.display;
const at = [
  Math.floor(((Number(x) - d.origin.x) * facts.image.width) / d.size.width),
  Math.floor(((Number(y) - d.origin.y) * facts.image.height) / d.size.height),
];
const click = await client.callTool({ name: "left_click", arguments: { coordinate: at } });
const clickText = click.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
report("left_click", { isError: !!click.isError, at, text: clickText });
if (click.isError) fail("left_click", clickText);

await transport.terminateSession();
await client.close();
report("done", {});
