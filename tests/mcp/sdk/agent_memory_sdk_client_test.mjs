// End-to-end test of `agent-memory serve` with the official MCP TypeScript
// SDK client (@modelcontextprotocol/sdk): the SDK starts the real binary over
// stdio, lists the five seed 004 tools (their names and input fields exactly
// the seed's) and calls them, checking every structured result against the
// tool's output schema, and every refusal in the seed's error shape
// {"error": Code, "message"}. Usage:
//   node agent_memory_sdk_client_test.mjs AGENT_MEMORY_BINARY
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { binaryArgument, callOk, check, checksPassed, connectServer } from "./sdk_test_support.mjs";

const binary = binaryArgument("node agent_memory_sdk_client_test.mjs AGENT_MEMORY_BINARY");

const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentctx-memory-sdk-")));
const repo = join(dir, "repo");
const other = join(dir, "repo_evil");
mkdirSync(repo);
mkdirSync(other);
const serverLog = [];

const connect = (name, extra = []) =>
  connectServer({ command: binary, args: ["serve", ...extra], cwd: dir, name, log: serverLog });
const ok = callOk;

/// The seed's error object of a call that must fail.
async function refused(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError, true, `${name} ${JSON.stringify(args)} should fail`);
  const error = JSON.parse(result.content[0].text);
  assert.deepEqual(Object.keys(error), ["error", "message"]);
  return error;
}

const me = { agent_name: "aristotle", repo_root: repo };
const memoryDir = join(repo, ".github", "agent-memory", "aristotle");

const client = await connect("agentctx-memory-sdk-test", ["--allow-root", repo]);
try {
  await check("initialize: serverInfo and instructions", async () => {
    assert.equal(client.getServerVersion().name, "agent-memory");
    assert.match(client.getInstructions(), /read_summary/);
  });

  await check("tools/list: the seed's five tools with the seed's input fields", async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(tools.map((t) => t.name),
                     ["start_session", "append_entry", "read_summary", "update_summary", "list_sessions"]);
    const fields = (name) => Object.keys(byName[name].inputSchema.properties).sort();
    assert.deepEqual(fields("start_session"), ["agent_name", "date", "repo_root"]);
    assert.deepEqual(fields("append_entry"), ["agent_name", "content", "date", "repo_root", "section"]);
    assert.deepEqual(fields("read_summary"), ["agent_name", "repo_root"]);
    assert.deepEqual(fields("update_summary"), ["agent_name", "base_hash", "content", "mode", "repo_root", "section"]);
    assert.deepEqual(fields("list_sessions"), ["agent_name", "before", "limit", "repo_root"]);
    assert.deepEqual(byName.append_entry.inputSchema.required.sort(),
                     ["agent_name", "content", "repo_root", "section"]);
    for (const tool of tools) assert.equal(tool.outputSchema.type, "object");
  });

  await check("start_session creates the log once (the seed's return shape)", async () => {
    const first = await ok(client, "start_session", { ...me, date: "2025-01-20" });
    assert.deepEqual(first, { session_file: ".github/agent-memory/aristotle/logs/2025-01-20.md", created: true });
    const second = await ok(client, "start_session", { ...me, date: "2025-01-20" });
    assert.equal(second.created, false);
    assert.ok(existsSync(join(memoryDir, "_schema.md")));
  });

  await check("append_entry: entries in order under the exact heading", async () => {
    for (const content of ["- first decision", "- second decision"]) {
      await ok(client, "append_entry", { ...me, date: "2025-01-20", section: "Decisions", content });
    }
    const log = readFileSync(join(memoryDir, "logs", "2025-01-20.md"), "utf8");
    assert.match(log, /## Decisions\n\n- first decision\n\n- second decision\n\n## Open Questions/);
  });

  await check("append_entry refusals in the seed's shape, nothing written", async () => {
    const before = readFileSync(join(memoryDir, "logs", "2025-01-20.md"), "utf8");
    const cases = [
      [{ section: "Thoughts", content: "x" }, "InvalidSection", /^Section 'Thoughts' is not defined in schema/],
      [{ section: "Decisions", content: "x\n## Decisions\ny" }, "InvalidContent", /heading/],
      [{ section: "Decisions", content: "x".repeat(70000) }, "ContentTooLarge", /refused, never cut/],
      [{ section: "Decisions", content: "x", date: "2025-02-30" }, "InvalidDate", /2025-02-30/],
    ];
    for (const [args, code, message] of cases) {
      const error = await refused(client, "append_entry", { ...me, date: "2025-01-20", ...args });
      assert.equal(error.error, code, JSON.stringify(error));
      assert.match(error.message, message);
    }
    assert.equal(readFileSync(join(memoryDir, "logs", "2025-01-20.md"), "utf8"), before);
    const name = await refused(client, "start_session", { ...me, agent_name: "../x" });
    assert.equal(name.error, "InvalidAgentName");
  });

  await check("repo_root: only the allowed repository, never a sibling sharing its prefix", async () => {
    for (const root of [other, "repo", "/", `${repo}/../repo_evil`]) {
      const error = await refused(client, "start_session", { ...me, repo_root: root });
      assert.equal(error.error, "InvalidRepoRoot", root);
    }
    assert.ok(!existsSync(join(other, ".github")));
  });

  await check("read_summary and update_summary with base_hash and Conflict", async () => {
    const summary = await ok(client, "read_summary", me);
    assert.equal(summary.initialized, true);
    assert.match(summary.summary, /^# Agent Memory Summary: aristotle\n\n## Context\n/);
    const updated = await ok(client, "update_summary",
                             { ...me, section: "Decisions", content: "- parser first", mode: "append",
                               base_hash: summary.hash });
    assert.equal(updated.previous_hash, summary.hash);
    const conflict = await refused(client, "update_summary",
                                   { ...me, section: "Decisions", content: "- late", mode: "replace",
                                     base_hash: summary.hash });
    assert.equal(conflict.error, "Conflict");
    assert.equal((await refused(client, "update_summary",
                                { ...me, section: "Decisions", content: "x", mode: "overwrite" })).error,
                 "InvalidMode");
    assert.equal((await refused(client, "update_summary",
                                { ...me, section: "Thoughts", content: "x", mode: "append" })).error,
                 "InvalidSection");
    const again = await ok(client, "read_summary", me);
    assert.equal(again.hash, updated.hash);
    assert.match(again.summary, /## Decisions\n\n- parser first\n/);
  });

  await check("list_sessions: newest first, limit and paging", async () => {
    for (const date of ["2025-01-15", "2025-01-18"]) await ok(client, "start_session", { ...me, date });
    const all = await ok(client, "list_sessions", me);
    assert.deepEqual(all.sessions, ["2025-01-20.md", "2025-01-18.md", "2025-01-15.md"]);
    const page = await ok(client, "list_sessions", { ...me, limit: 2 });
    assert.deepEqual(page.sessions, ["2025-01-20.md", "2025-01-18.md"]);
    assert.equal(page.next_before, "2025-01-18");
    const rest = await ok(client, "list_sessions", { ...me, limit: 2, before: page.next_before });
    assert.deepEqual(rest.sessions, ["2025-01-15.md"]);
  });

  await check("a symlink below the repository is PathOutsideRepository", async () => {
    mkdirSync(join(dir, "outside"));
    symlinkSync(join(dir, "outside"), join(memoryDir, "logs", "2025-02-01.md"));
    const error = await refused(client, "append_entry",
                                { ...me, date: "2025-02-01", section: "Decisions", content: "x" });
    assert.equal(error.error, "PathOutsideRepository");
  });

  await check("arguments of the wrong type are refused by the server", async () => {
    const result = await client.callTool({ name: "list_sessions", arguments: { ...me, limit: 0 } });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /^invalid arguments for list_sessions: /);
  });
} finally {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
}

assert.match(serverLog.join(""), /agent-memory serve: repositories allowed: 1/);
console.log(`agent-memory mcp sdk test: ${checksPassed()} checks passed`);
