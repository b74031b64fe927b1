// End-to-end test of `relay serve` with the official MCP TypeScript SDK
// client (@modelcontextprotocol/sdk): the SDK starts the real binary over
// stdio, lists the tools (checking their schemas) and calls them (checking
// every structured result against the tool's output schema), through the
// Agentic Protocol's operations and their errors. Usage:
//   node relay_sdk_client_test.mjs RELAY_BINARY
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { binaryArgument, callOk, check, checksPassed, connectServer } from "./sdk_test_support.mjs";

const relay = binaryArgument("node relay_sdk_client_test.mjs RELAY_BINARY");

const dir = mkdtempSync(join(tmpdir(), "agentctx-relay-sdk-"));
const serverLog = [];

/// A client connected to `relay serve --store store` in `dir`.
const connect = (name) => connectServer({ command: relay, args: ["serve", "--store", "store"], cwd: dir, name, log: serverLog });
const ok = callOk;

/// The protocol error {code, status, message} of a call that must fail.
async function protocolError(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError, true, `${name} ${JSON.stringify(args)} should fail`);
  assert.equal(result.structuredContent, undefined);
  return JSON.parse(result.content[0].text).error;
}

const now = new Date().toISOString();
const project = "proj_sdk";
const key = { project_id: project, subject: "longmemeval_s", predicate: "recall_any_at_5" };
const pkg = (id, extra = {}) => ({
  package_id: id,
  project_id: project,
  relay_version: "0.1",
  title: "Shipped archive and de-archive",
  status: "complete",
  package_type: "milestone",
  review_type: "none",
  created_at: now,
  created_by: { id: "jordan", type: "human", session_id: null },
  ...extra,
});

const client = await connect("agentctx-relay-sdk-test");
try {
  await check("initialize: serverInfo and instructions", async () => {
    assert.equal(client.getServerVersion().name, "relay");
    assert.deepEqual(client.getServerCapabilities(), { tools: {} });
    assert.match(client.getInstructions(), /relay_orient/);
  });

  await check("tools/list: the thirteen relay tools with input and output schemas", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), [
      "relay_deposit", "relay_pull", "relay_orient", "relay_orchestrate", "relay_flag_for_review", "relay_review",
      "relay_assert_fact", "relay_invalidate_fact", "relay_query_facts", "relay_awaiting_review",
      "relay_start_session", "relay_end_session", "relay_conformance",
    ]);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, "object");
      assert.equal(tool.outputSchema.type, "object");
      assert.ok(tool.description.length > 40);
    }
    assert.deepEqual(tools[1].inputSchema.properties.mode.enum, ["latest", "specific", "relevant"]);
  });

  const first = pkg("pkg_sdk_1", {
    description: "Projects can be archived and restored; the dashboard hides archived ones.",
    decisions_made: ["Soft archive via archived_at timestamp"],
    open_questions: ["Should archived projects count toward quotas?"],
    "x-trust-score": 0.9,
  });
  let hash;
  await check("relay_deposit stores the package with its content hash", async () => {
    const result = await ok(client, "relay_deposit", { package: first });
    assert.equal(result.created, true);
    assert.match(result.hash, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(result.package, first);
    hash = result.hash;
  });

  await check("relay_deposit of the identical package again is idempotent", async () => {
    const result = await ok(client, "relay_deposit", { package: first });
    assert.equal(result.created, false);
    assert.equal(result.hash, hash);
  });

  await check("relay_deposit of other content under the same id is 409 duplicate_package_id", async () => {
    const error = await protocolError(client, "relay_deposit", { package: { ...first, title: "Something else" } });
    assert.equal(error.code, "duplicate_package_id");
    assert.equal(error.status, 409);
    assert.match(error.message, /pkg_sdk_1/);
  });

  await check("relay_deposit of an invalid package is 400 invalid_schema", async () => {
    const { title, ...untitled } = pkg("pkg_sdk_bad");
    const error = await protocolError(client, "relay_deposit", { package: untitled });
    assert.equal(error.code, "invalid_schema");
    assert.equal(error.status, 400);
    assert.match(error.message, /title is required/);
  });

  const second = pkg("pkg_sdk_2", {
    title: "Retrieval benchmark",
    package_type: "analysis",
    status: "draft",
    description: "Hybrid retrieval reached 97 percent recall at five on LongMemEval.",
  });
  await check("relay_pull latest: newest first", async () => {
    await ok(client, "relay_deposit", { package: second });
    const result = await ok(client, "relay_pull", { mode: "latest", project_id: project, limit: 5 });
    assert.deepEqual(result.packages.map((p) => p.package.package_id), ["pkg_sdk_2", "pkg_sdk_1"]);
  });

  await check("relay_pull specific, and 404 package_not_found", async () => {
    const result = await ok(client, "relay_pull", { mode: "specific", package_id: "pkg_sdk_1" });
    assert.equal(result.packages.length, 1);
    assert.equal(result.packages[0].hash, hash);
    assert.equal(result.packages[0].package["x-trust-score"], 0.9);
    // The members of `relay pull --mode specific --json`: the package in full.
    assert.equal(result.project_id, null);
    assert.equal(result.packages[0].deposited_hash, hash);
    assert.deepEqual(result.packages[0].status_changes, []);
    const error = await protocolError(client, "relay_pull", { mode: "specific", package_id: "pkg_missing" });
    assert.deepEqual([error.code, error.status], ["package_not_found", 404]);
  });

  await check("relay_pull relevant ranks the matching package first, with scores", async () => {
    const result = await ok(client, "relay_pull", {
      mode: "relevant", project_id: project, query: "hybrid retrieval recall benchmark", limit: 2,
    });
    assert.equal(result.packages[0].package.package_id, "pkg_sdk_2");
    assert.equal(typeof result.packages[0].score, "number");
    assert.ok(result.packages[0].lexical_score > 0);
  });

  await check("relay_orient returns the orientation bundle", async () => {
    const bundle = await ok(client, "relay_orient", { project_id: project, window_days: 14 });
    assert.equal(bundle.project.project_id, project);
    assert.equal(bundle.recent_packages.length, 2);
    assert.deepEqual(bundle.open_questions, ["Should archived projects count toward quotas?"]);
    assert.equal(bundle.window_days, 14);
    const error = await protocolError(client, "relay_orient", { project_id: "proj_missing" });
    assert.deepEqual([error.code, error.status], ["project_not_found", 404]);
  });

  await check("relay_orchestrate returns a digest with focus snippets", async () => {
    const digest = await ok(client, "relay_orchestrate", { project_id: project, focus: "archive", snippets: 3 });
    assert.equal(digest.scope, "project");
    assert.equal(digest.summary.packages, 1);  // the draft is left out
    assert.equal(digest.snippets[0].package_id, "pkg_sdk_1");
  });

  let firstFact;
  await check("relay_assert_fact twice: the second supersedes the first", async () => {
    const a = await ok(client, "relay_assert_fact", {
      ...key, value: "95.0", valid_from: "2026-04-01T00:00:00Z", source_package_id: "pkg_sdk_2", tags: ["benchmark"],
    });
    assert.equal(a.changed, true);
    assert.equal(a.superseded, null);
    // The source package's created_by, copied whole (its null session_id too).
    assert.deepEqual(a.fact.asserted_by, { id: "jordan", type: "human", session_id: null });
    firstFact = a.fact.fact_id;
    const b = await ok(client, "relay_assert_fact", { ...key, value: "97.0", valid_from: "2026-04-10T12:00:00Z" });
    assert.equal(b.changed, true);
    assert.equal(b.superseded, firstFact);
    assert.equal(b.fact.value, "97.0");
  });

  await check("relay_query_facts: current, as of a time, and the history", async () => {
    const current = await ok(client, "relay_query_facts", { project_id: project });
    assert.equal(current.query, "current");
    assert.deepEqual(current.facts.map((f) => f.value), ["97.0"]);
    const then = await ok(client, "relay_query_facts", { project_id: project, at: "2026-04-05T00:00:00Z" });
    assert.equal(then.query, "at");
    assert.deepEqual(then.facts.map((f) => f.value), ["95.0"]);
    const history = await ok(client, "relay_query_facts", { ...key });
    assert.equal(history.query, "history");
    assert.deepEqual(history.facts.map((f) => [f.fact_id === firstFact, f.valid_to ?? null]),
                     [[true, "2026-04-10T12:00:00Z"], [false, null]]);
  });

  await check("relay_invalidate_fact ends the current fact", async () => {
    assert.equal((await ok(client, "relay_invalidate_fact", { ...key, value: "1.0" })).invalidated, 0);
    assert.equal((await ok(client, "relay_invalidate_fact", key)).invalidated, 1);
    assert.deepEqual((await ok(client, "relay_query_facts", { project_id: project })).facts, []);
  });

  await check("relay_flag_for_review, relay_awaiting_review and relay_review", async () => {
    const flagged = await ok(client, "relay_flag_for_review", {
      package_id: "pkg_sdk_2", review_type: "human", note: "check the numbers",
    });
    assert.equal(flagged.package.status, "awaiting_review");
    assert.equal(flagged.package.review_type, "human");
    assert.notEqual(flagged.hash, hash);
    const awaiting = await ok(client, "relay_awaiting_review", { project_id: project });
    assert.deepEqual(awaiting.packages.map((p) => p.package.package_id), ["pkg_sdk_2"]);
    const error = await protocolError(client, "relay_flag_for_review", { package_id: "pkg_sdk_1", review_type: "agent" });
    assert.deepEqual([error.code, error.status], ["invalid_transition", 400]);
    const done = await ok(client, "relay_review", { package_id: "pkg_sdk_2", status: "complete" });
    assert.equal(done.package.status, "complete");
    assert.deepEqual((await ok(client, "relay_awaiting_review", { project_id: project })).packages, []);
    // The flag's note reads back through a specific pull.
    const pulled = await ok(client, "relay_pull", { mode: "specific", package_id: "pkg_sdk_2" });
    assert.deepEqual(pulled.packages[0].status_changes.map((c) => [c.status, c.review_type, c.note]),
                     [["awaiting_review", "human", "check the numbers"], ["complete", "human", undefined]]);
    assert.equal(pulled.packages[0].status_changes[1].hash, done.hash);
  });

  await check("relay_start_session and relay_end_session: the session lists its actor's packages", async () => {
    const session = await ok(client, "relay_start_session", { project_id: "proj_sdk_sessions", actor_id: "sdk-agent", actor_type: "agent" });
    assert.match(session.session_id, /^sess_[0-9a-f]{32}$/);
    assert.match(session.callsign, /^[a-z]+-[a-z]+$/);
    assert.deepEqual(session.packages_deposited, []);
    const inSession = pkg("pkg_sdk_session", {
      project_id: "proj_sdk_sessions",
      created_by: { id: "sdk-agent", type: "agent", session_id: session.session_id },
    });
    await ok(client, "relay_deposit", { package: inSession });
    const ended = await ok(client, "relay_end_session", { session_id: session.session_id });
    assert.equal(typeof ended.ended_at, "string");
    assert.deepEqual(ended.packages_deposited, ["pkg_sdk_session"]);
    const again = await client.callTool({ name: "relay_end_session", arguments: { session_id: session.session_id } });
    assert.equal(again.isError, true);
    assert.equal(JSON.parse(again.content[0].text).error.code, "invalid_schema");
  });

  await check("relay_conformance: L3", async () => {
    const descriptor = await ok(client, "relay_conformance", {});
    assert.equal(descriptor.protocol_version, "0.1");
    assert.equal(descriptor.conformance_level, "L3");
    assert.equal(descriptor.capabilities.hybrid_search, true);
  });

  await check("bad arguments are tool errors the model can read", async () => {
    const cases = [
      ["relay_pull", { mode: "oldest", project_id: project }, /mode must be one of latest, specific, relevant/],
      ["relay_pull", { mode: "latest" }, /mode latest needs project_id/],
      ["relay_pull", { mode: "latest", project_id: project, limit: 0 }, /limit must be at least 1/],
      ["relay_assert_fact", { ...key, value: 97 }, /value must be a string, not a number/],
      ["relay_query_facts", { project_id: project, at: "yesterday" }, /at: invalid RFC 3339 timestamp "yesterday"/],
      ["relay_pull", { mode: "specific", package_id: "pkg_sdk_1", limit: 2 }, /limit does not apply to mode specific/],
      ["relay_review", { package_id: "pkg_sdk_1", status: "complete", review_type: "human" },
       /review_type goes with status awaiting_review/],
      ["relay_deposit", { package: "{}" }, /package must be an object/],
    ];
    for (const [name, args, message] of cases) {
      const result = await client.callTool({ name, arguments: args });
      assert.equal(result.isError, true, `${name} ${JSON.stringify(args)}`);
      const { error } = JSON.parse(result.content[0].text);
      assert.equal(error.code, "invalid_schema");
      assert.equal(error.status, 400);
      assert.match(error.message, new RegExp(`^invalid arguments for ${name}: `));
      assert.match(error.message, message);
    }
  });

  await check("a message nesting 1,024 levels with a scalar innermost is read (as JSON.parse counts)", async () => {
    // The message, params, arguments and the package are four levels.
    let nested = 1;
    for (let i = 0; i < 1020; ++i) nested = [nested];
    const deep = { ...pkg("pkg_sdk_deep"), project_id: "proj_sdk_deep", "x-deep": nested };
    const result = await ok(client, "relay_deposit", { package: deep });
    assert.equal(result.created, true);
    assert.deepEqual(result.package, deep);
  });

  await check("a second writer is refused while the server runs (store_locked)", async () => {
    const second = new StdioClientTransport({ command: relay, args: ["serve", "--store", "store"], cwd: dir, stderr: "pipe" });
    second.stderr.on("data", (chunk) => serverLog.push(chunk.toString()));
    const refused = new Client({ name: "second", version: "1.0.0" });
    await assert.rejects(refused.connect(second));
    await refused.close();
  });
} finally {
  await client.close();
}

try {
  await check("a new server on the same store sees everything (the log was synced)", async () => {
    const again = await connect("agentctx-relay-sdk-test-2");
    try {
      const result = await ok(again, "relay_pull", { mode: "latest", project_id: project });
      assert.deepEqual(result.packages.map((p) => [p.package.package_id, p.package.status]),
                       [["pkg_sdk_2", "complete"], ["pkg_sdk_1", "complete"]]);
      const history = await ok(again, "relay_query_facts", { ...key });
      assert.equal(history.facts.length, 2);
    } finally {
      await again.close();
    }
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const log = serverLog.join("");
assert.match(log, /relay serve: client "agentctx-relay-sdk-test" "1\.0\.0" asked for protocol "2025-11-25"; speaking 2025-11-25/);
assert.match(log, /relay: .*locked/);
console.log(`relay mcp sdk test: ${checksPassed()} checks passed`);
