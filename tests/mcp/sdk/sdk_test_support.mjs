// What the MCP SDK end-to-end tests share: the server binary argument and
// numbered checks, printed "ok N - name" as they pass.
import assert from "node:assert/strict";
import { resolve } from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/// The absolute path of the binary given as the first argument (the server
/// runs in another directory); prints `usage` and exits 2 when it is missing.
export function binaryArgument(usage) {
  if (!process.argv[2]) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  return resolve(process.argv[2]);
}

let passed = 0;

/// Runs one named check; a failure throws and ends the test.
export async function check(name, body) {
  await body();
  passed += 1;
  console.log(`ok ${passed} - ${name}`);
}

/// How many checks have passed.
export const checksPassed = () => passed;

/// A client named `name` connected to `command args...` started in `cwd`;
/// the server's stderr is collected into the array `log`.
export async function connectServer({ command, args, cwd, name, log }) {
  const transport = new StdioClientTransport({ command, args, cwd, stderr: "pipe" });
  transport.stderr.on("data", (chunk) => log.push(chunk.toString()));
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/// The structured result of a call that must succeed (its text content must
/// be the same JSON).
export async function callOk(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError, false, `${name}: ${result.content[0].text}`);
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}
