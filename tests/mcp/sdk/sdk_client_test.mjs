// End-to-end test of `agentsdb serve` with the official MCP TypeScript SDK
// client (@modelcontextprotocol/sdk): the SDK starts the real binary over
// stdio, negotiates the protocol, lists the tools (the SDK checks their
// schemas) and calls them (the SDK checks every structured result against
// the tool's output schema). Usage: node sdk_client_test.mjs AGENTSDB_BINARY
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

import { binaryArgument, check, checksPassed } from "./sdk_test_support.mjs";

const agentsdb = binaryArgument("node sdk_client_test.mjs AGENTSDB_BINARY");

// A repository with one markdown file, compiled into a base layer.
const dir = mkdtempSync(join(tmpdir(), "agentctx-mcp-sdk-"));
writeFileSync(join(dir, "RELEASE.md"), "# Releases\n\nReleases are cut from the release branch on Tuesdays.\n");
writeFileSync(join(dir, "CLI.md"), "# Command line\n\nThe agentsdb command line lives in cli/agentsdb.\n");
execFileSync(agentsdb, ["compile", "--root", dir, "--include", "*.md", "--out", join(dir, "AGENTS.db"), "--quiet"]);

const serverLog = [];
const transport = new StdioClientTransport({
  command: agentsdb,
  args: ["serve", "--base", "AGENTS.db", "--user", "AGENTS.user.db", "--delta", "AGENTS.delta.db", "--local",
         "AGENTS.local.db"],
  cwd: dir,
  stderr: "pipe",
});
transport.stderr.on("data", (chunk) => serverLog.push(chunk.toString()));
const client = new Client({ name: "agentctx-sdk-test", version: "1.0.0" });

const text = (result) => result.content[0].text;

try {
  await check("initialize: the SDK's latest protocol version is served", async () => {
    await client.connect(transport);
    assert.equal(client.getServerVersion().name, "agentsdb");
    assert.deepEqual(client.getServerCapabilities(), { tools: {} });
    assert.match(client.getInstructions(), /agents_search/);
    assert.equal(LATEST_PROTOCOL_VERSION, "2025-11-25");
  });

  await check("ping", async () => {
    assert.deepEqual(await client.ping(), {});
  });

  await check("tools/list: the three tools with input and output schemas", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ["agents_search", "agents_context_write", "agents_context_propose"]);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, "object");
      assert.equal(tool.outputSchema.type, "object");
      assert.ok(tool.description.length > 20);
    }
    const search = tools[0];
    assert.deepEqual(search.inputSchema.required, ["query"]);
    assert.deepEqual(search.inputSchema.properties.layers.items.enum, ["base", "user", "delta", "local"]);
  });

  await check("agents_search finds the compiled base chunk", async () => {
    const result = await client.callTool({
      name: "agents_search",
      arguments: { query: "Releases are cut from the release branch on Tuesdays.", k: 2 },
    });
    assert.equal(result.isError, false);
    assert.deepEqual(JSON.parse(text(result)), result.structuredContent);
    const { results } = result.structuredContent;
    assert.equal(results.length, 2);
    assert.equal(results[0].layer, "base");
    assert.match(results[0].content, /Tuesdays/);
    assert.equal(results[0].author, "human");
    assert.deepEqual(results[0].conflicts, []);
    assert.equal(results[0].sources[0].type, "source_string");
    assert.match(results[0].sources[0].value, /^RELEASE\.md:\d+$/);
  });

  let contextId;
  await check("agents_context_write appends to the delta layer and returns the context_id", async () => {
    const result = await client.callTool({
      name: "agents_context_write",
      arguments: {
        content: "Invariant: requests to /foo MUST include header Bar.",
        kind: "invariant",
        confidence: 0.8,
        sources: ["src/server/router.ts:88"],
        scope: "delta",
      },
    });
    assert.equal(result.isError, false);
    contextId = result.structuredContent.context_id;
    assert.ok(Number.isInteger(contextId) && contextId > 0);
    assert.equal(result.structuredContent.layer, "delta");
    assert.equal(result.structuredContent.created, true);
  });

  await check("the next search sees the write, by the dotted alias too", async () => {
    const result = await client.callTool({
      name: "agents.search",
      arguments: { query: "Invariant: requests to /foo MUST include header Bar.", k: 1, layers: ["delta"] },
    });
    assert.equal(result.isError, false);
    const [hit] = result.structuredContent.results;
    assert.equal(hit.id, contextId);
    assert.equal(hit.author, "mcp");
    assert.equal(hit.kind, "invariant");
    assert.deepEqual(hit.sources, [{ type: "source_string", value: "src/server/router.ts:88" }]);
  });

  await check("agents_context_propose records a proposal once", async () => {
    const first = await client.callTool({
      name: "agents_context_propose",
      arguments: { context_id: contextId, target: "user", why: "every client sends Bar" },
    });
    assert.equal(first.isError, false);
    assert.equal(first.structuredContent.context_id, contextId);
    assert.equal(first.structuredContent.already_pending, false);
    const second = await client.callTool({ name: "agents.context.propose", arguments: { context_id: contextId } });
    assert.equal(second.structuredContent.already_pending, true);
    assert.equal(second.structuredContent.proposal_id, first.structuredContent.proposal_id);
  });

  await check("bad arguments are tool errors the model can read", async () => {
    const cases = [
      ["agents_search", { query: "" }, /query must not be empty/],
      ["agents_search", { query: "x", k: 0 }, /k must be at least 1/],
      ["agents_search", { query: "x", layers: ["../AGENTS.db"] }, /layers\[0\] must be one of base, user, delta, local/],
      ["agents_context_write", { content: "x", kind: "note", confidence: 0.5, scope: "base" }, /scope must be one of local, delta/],
      ["agents_context_write", { content: "x", kind: "tombstone", confidence: 0.5, scope: "local" }, /reserved/],
      ["agents_context_write", { content: "x", kind: "note", confidence: 1.5, scope: "local" }, /confidence must be at most 1/],
      ["agents_context_propose", { context_id: 42, target: "user" }, /chunk 42 is not in the delta layer/],
      ["agents_context_propose", { context_id: contextId, target: "base" }, /target must be one of user/],
    ];
    for (const [name, args, message] of cases) {
      const result = await client.callTool({ name, arguments: args });
      assert.equal(result.isError, true, `${name} ${JSON.stringify(args)}`);
      assert.match(text(result), message);
      assert.equal(result.structuredContent, undefined);
    }
  });

  await check("an unknown tool is a JSON-RPC invalid-params error", async () => {
    await assert.rejects(client.callTool({ name: "agents_delete_everything", arguments: {} }), (error) => {
      assert.equal(error.code, -32602);
      assert.match(error.message, /unknown tool/);
      return true;
    });
  });

  await check("an unknown method is a JSON-RPC method-not-found error", async () => {
    await assert.rejects(client.listPrompts(), (error) => {
      assert.equal(error.code, -32601);
      return true;
    });
  });

  await check("the server is still serving after the errors", async () => {
    const result = await client.callTool({ name: "agents_search", arguments: { query: "command line" } });
    assert.equal(result.isError, false);
    assert.ok(result.structuredContent.results.length >= 1);
  });
} finally {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
}

const log = serverLog.join("");
assert.match(log, /agentsdb serve: client "agentctx-sdk-test" "1\.0\.0" asked for protocol "2025-11-25"; speaking 2025-11-25/);
console.log(`mcp sdk test: ${checksPassed()} checks passed`);
