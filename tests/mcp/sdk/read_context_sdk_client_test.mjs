// End-to-end test of `read-context serve` with the official MCP TypeScript
// SDK client: the six tools with their schemas, read_context's bundle in the
// seed's envelope, read_full_notes paging, and propose / confirm / decline
// with a conflict. Usage:
//   node read_context_sdk_client_test.mjs READ_CONTEXT_BINARY
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { binaryArgument, callOk, check, checksPassed, connectServer } from "./sdk_test_support.mjs";

const binary = binaryArgument("node read_context_sdk_client_test.mjs READ_CONTEXT_BINARY");
const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentctx-context-sdk-")));
mkdirSync(join(dir, "iguana"));
writeFileSync(join(dir, "taste.md"), "# Taste\n\n## Color\n- subtle\n");
writeFileSync(join(dir, "iguana", "brief.md"), "Keep the scales crisp.\n");
writeFileSync(join(dir, "iguana", "notes.md"), Array.from({ length: 60 }, (_, i) => `note ${i + 1}`).join("\n") + "\n");
const now = new Date().toISOString();
writeFileSync(join(dir, "iguana", "log.jsonl"),
              `{"timestamp":"${now}","session_id":"s1","summary":"applied tone_lifted_shadows"}\n`);
const serverLog = [];

async function failure(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError, true, `${name} ${JSON.stringify(args)} should fail`);
  const body = JSON.parse(result.content[0].text);
  assert.equal(body.success, false);
  return body.error;
}

const client = await connectServer({ command: binary, args: ["serve", "--root", dir], cwd: dir,
                                     name: "agentctx-context-sdk-test", log: serverLog });
try {
  await check("tools/list: the six context tools", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name),
                     ["read_context", "read_full_notes", "propose", "list_proposals", "confirm", "decline"]);
    assert.deepEqual(tools[0].inputSchema.required, ["item_id"]);
  });

  await check("read_context: the seed's envelope, tiers in reading order, long notes elided", async () => {
    const { success, data } = await callOk(client, "read_context", { item_id: "iguana" });
    assert.equal(success, true);
    assert.deepEqual(data.reading_order, ["taste", "brief", "notes", "recent_log", "vocabulary_gaps"]);
    assert.equal(data.taste.path, "taste.md");
    assert.match(data.taste.last_modified, /Z$/);
    assert.equal(data.brief.content, "Keep the scales crisp.\n");
    assert.equal(data.notes.summarized, true);
    assert.equal(data.notes.full_length_lines, 60);
    assert.match(data.notes.content, /\[\.\.\. 20 lines elided; full notes: read_full_notes\("iguana"\)/);
    assert.equal(data.recent_log[0].summary, "applied tone_lifted_shadows");
    assert.deepEqual(data.vocabulary_gaps, []);
  });

  await check("read_full_notes pages", async () => {
    const { data } = await callOk(client, "read_full_notes", { item_id: "iguana", start_line: 11, max_lines: 20 });
    assert.equal(data.lines.length, 20);
    assert.equal(data.lines[0], "note 11");
    assert.equal(data.next_line, 31);
  });

  await check("propose, confirm; decline; a conflict; bad ids", async () => {
    const made = await callOk(client, "propose", { target: "notes", item_id: "iguana", mode: "append",
                                                   content: "- WB too cool", reason: "session 2" });
    const id = made.data.proposal.id;
    const pending = await callOk(client, "list_proposals", {});
    assert.deepEqual(pending.data.proposals.map((p) => p.id), [id]);
    const confirmed = await callOk(client, "confirm", { proposal_id: id, actor: "jordan" });
    assert.equal(confirmed.data.proposal.status, "confirmed");
    assert.match(readFileSync(join(dir, "iguana", "notes.md"), "utf8"), /note 60\n\n- WB too cool\n$/);
    assert.equal((await failure(client, "confirm", { proposal_id: id, actor: "jordan" })).code, "already_decided");

    const stale = await callOk(client, "propose", { target: "taste", mode: "replace", content: "# Taste\n- bold" });
    writeFileSync(join(dir, "taste.md"), "# Taste\nedited\n");
    assert.equal((await failure(client, "confirm", { proposal_id: stale.data.proposal.id, actor: "jordan" })).code,
                 "conflict");
    const declined = await callOk(client, "decline", { proposal_id: stale.data.proposal.id, actor: "jordan", note: "stale" });
    assert.equal(declined.data.proposal.status, "declined");
    assert.equal((await failure(client, "read_context", { item_id: "../etc" })).code, "invalid_argument");
  });
} finally {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
}
assert.match(serverLog.join(""), /read-context serve: root /);
console.log(`read-context mcp sdk test: ${checksPassed()} checks passed`);
