// Differential test of agentctx's canonical JSON against node. Reads the
// stream of tests/json/canonical_node_driver.cpp on standard input (its file
// comment describes the format) and checks, byte for byte:
//
//   documents: our RFC 8785 form against canonicalize(JSON.parse(doc)) (the
//     npm package `canonicalize`, the RFC's reference implementation), and our
//     Appendix A (relay) form against appendixA(JSON.parse(doc)) below;
//   numbers: json::append_es_number(x) against String(x).
//
// Prints what it checked (counts, and what the documents exercised); on a
// mismatch, the five shortest failing documents or the first five numbers
// (escaped: \ as \\, every character outside printable ASCII as \uXXXX),
// then exits 1.
// Usage: canonical_node_driver documents|numbers | node canonical_diff.mjs
import canonicalize from "canonicalize";
import { readFileSync, readSync } from "node:fs";

const maxReported = 5;

// Appendix A as RFC 8785 with two changes: member names ordered by their
// UTF-8 bytes instead of their UTF-16 code units, and members whose value is
// null left out (nulls in arrays stay). Primitives and names are written by
// canonicalize itself (JSON.stringify, after its finiteness and lone
// surrogate checks).
const orderStats = { orderDiffers: 0, nullsOmitted: 0 };
function appendixA(value) {
  if (value === null || typeof value !== "object") return canonicalize(value);
  if (Array.isArray(value)) return "[" + value.map(appendixA).join(",") + "]";
  const names = Object.keys(value);
  const kept = names.filter((name) => value[name] !== null);
  const byUtf8 = kept
    .map((name) => [Buffer.from(name, "utf8"), name])
    .sort((a, b) => Buffer.compare(a[0], b[0]))
    .map(([, name]) => name);
  orderStats.nullsOmitted += names.length - kept.length;
  const byUtf16 = [...kept].sort();
  if (byUtf8.some((name, i) => name !== byUtf16[i])) orderStats.orderDiffers += 1;
  return "{" + byUtf8.map((name) => canonicalize(name) + ":" + appendixA(value[name])).join(",") + "}";
}

// --- reading the stream -------------------------------------------------------

class Input {
  constructor(fd) {
    this.fd = fd;
    this.buffer = Buffer.alloc(1 << 22);
    this.start = 0;
    this.end = 0;
  }

  // The next `n` bytes, valid until the next call (the buffer is reused).
  take(n) {
    if (this.end - this.start < n) this.fill(n);
    const bytes = this.buffer.subarray(this.start, this.start + n);
    this.start += n;
    return bytes;
  }

  fill(n) {
    const pending = this.end - this.start;
    if (n > this.buffer.length) {
      const bigger = Buffer.alloc(Math.max(n, this.buffer.length * 2));
      this.buffer.copy(bigger, 0, this.start, this.end);
      this.buffer = bigger;
    } else {
      this.buffer.copyWithin(0, this.start, this.end);
    }
    this.start = 0;
    this.end = pending;
    while (this.end < n) {
      let read;
      try {
        read = readSync(this.fd, this.buffer, this.end, this.buffer.length - this.end, null);
      } catch (error) {
        if (error.code === "EAGAIN") {  // a non-blocking pipe: wait a little
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
          continue;
        }
        throw error;
      }
      if (read === 0) fail("the driver's output ended early (did it crash? see above)");
      this.end += read;
    }
  }

  u8() { return this.take(1)[0]; }
  u32() { return this.take(4).readUInt32LE(0); }
  // A length-prefixed field, copied: it stays valid.
  field() { return Buffer.from(this.take(this.u32())); }
  // A length-prefixed field as text.
  text(encoding) { return this.take(this.u32()).toString(encoding); }
}

function fail(message) {
  console.error(`canonical_diff: ${message}`);
  process.exit(1);
}

// `text` with everything outside printable ASCII as \uXXXX (and \ as \\), so
// that a report shows exactly which characters differ.
function escaped(text) {
  const escape = (c) => (c === "\\" ? "\\\\" : "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  return text.replace(/[^\x20-\x5b\x5d-\x7e]/g, escape);
}

// Our bytes for a report: as text when they are UTF-8, else in hex.
function ourText(bytes) {
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? escaped(text) : "(not UTF-8) " + bytes.toString("hex");
}

function firstDifference(ours, theirs) {
  let i = 0;
  while (i < ours.length && i < theirs.length && ours[i] === theirs[i]) i += 1;
  return i;
}

const counts = { documents: 0, documentBytes: 0, numbers: 0, mismatches: 0, failedItems: 0 };
// The reports kept: the shortest documents (the easiest to reduce), or the
// first numbers.
const mismatches = [];
function report(lines, size = 0) {
  counts.mismatches += 1;
  if (mismatches.length === maxReported && size >= mismatches[maxReported - 1].size) return;
  mismatches.push({ size, lines });
  mismatches.sort((a, b) => a.size - b.size);
  mismatches.length = Math.min(mismatches.length, maxReported);
}

// --- documents ------------------------------------------------------------------

function checkDocuments(input) {
  const n = input.u32();
  for (let i = 0; i < n; i += 1) {
    const docBytes = input.field();
    const doc = docBytes.toString("utf8");
    counts.documents += 1;
    counts.documentBytes += docBytes.length;
    const index = counts.documents - 1;
    const mismatchesBefore = counts.mismatches;
    let jcs, relay, problem;
    if (!Buffer.from(doc, "utf8").equals(docBytes)) {
      problem = "the driver generated a document that is not UTF-8 (a generator bug)";
    } else {
      try {
        const parsed = JSON.parse(doc);
        jcs = canonicalize(parsed);
        relay = appendixA(parsed);
      } catch (error) {
        problem = `node refuses the document (a generator bug): ${error.message}`;
      }
    }
    const status = input.u8();
    const ours = input.field();
    const oursRelay = input.field();
    if (problem !== undefined) {
      report([`document ${index}: ${problem}`, `  document: ${escaped(doc)}`], docBytes.length);
      counts.failedItems += 1;
      continue;
    }
    if (status !== 0) {
      const what = status === 1 ? "we refuse a valid document" : "our own consistency check failed";
      report([`document ${index}: ${what}: ${ours.toString("utf8")}`, `  document: ${escaped(doc)}`], docBytes.length);
      counts.failedItems += 1;
      continue;
    }
    for (const [form, theirs, oursBytes] of [["RFC 8785", jcs, ours], ["Appendix A", relay, oursRelay]]) {
      const theirBytes = Buffer.from(theirs, "utf8");
      if (theirBytes.equals(oursBytes)) continue;
      report([
        `document ${index}, ${form} form differs at byte ${firstDifference(oursBytes, theirBytes)}:`,
        `  document: ${escaped(doc)}`,
        `  ours:     ${ourText(oursBytes)}`,
        `  theirs:   ${escaped(theirs)}`,
      ], docBytes.length);
    }
    if (counts.mismatches !== mismatchesBefore) counts.failedItems += 1;
  }
}

// --- numbers --------------------------------------------------------------------

let numberBytes = new Uint8Array(8 * 65536);  // reused: batches are at most 65536 numbers
function checkNumbers(input) {
  const n = input.u32();
  if (numberBytes.length < n * 8) numberBytes = new Uint8Array(n * 8);
  numberBytes.set(input.take(n * 8));
  const values = new Float64Array(numberBytes.buffer, 0, n);  // host order, as written
  const ours = input.text("latin1");
  counts.numbers += n;
  // Compared in place (no joined copy of String(x)): half the time of join().
  let at = 0;
  let same = true;
  for (let i = 0; i < n && same; i += 1) {
    const theirs = String(values[i]);
    same = ours.startsWith(theirs, at) && (i + 1 === n ? at + theirs.length === ours.length
                                                       : ours.charCodeAt(at + theirs.length) === 10);
    at += theirs.length + 1;
  }
  if (same) return;
  const ourTexts = ours.split("\n");
  for (let i = 0; i < n; i += 1) {
    const expected = String(values[i]);
    if (ourTexts[i] === expected) continue;
    const bits = new BigUint64Array(values.buffer, i * 8, 1)[0].toString(16).padStart(16, "0");
    const our = JSON.stringify(ourTexts[i] ?? "(missing)");
    report([`number 0x${bits}: ours ${our}, String(x) ${JSON.stringify(expected)}`]);
    counts.failedItems += 1;
  }
}

// --- main -------------------------------------------------------------------------

const started = process.hrtime.bigint();
const input = new Input(0);
const magic = input.take(5).toString("latin1");
if (magic !== "ACJ1D" && magic !== "ACJ1N") fail(`not the driver's output (starts ${JSON.stringify(magic)})`);
const mode = magic[4] === "D" ? "documents" : "numbers";
let summary = {};
for (;;) {
  const type = String.fromCharCode(input.u8());
  if (type === "D") {
    checkDocuments(input);
  } else if (type === "N") {
    checkNumbers(input);
  } else if (type === "S") {
    summary = JSON.parse(input.text("utf8"));
  } else if (type === "E") {
    break;
  } else {
    fail(`unknown record ${JSON.stringify(type)} in the driver's output`);
  }
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const packageJson = new URL("./node_modules/canonicalize/package.json", import.meta.url);
const version = JSON.parse(readFileSync(packageJson, "utf8")).version;
const list = (entries) => entries.map(([kind, n]) => `${n} ${kind}`).join(", ");

if (mode === "documents" && counts.mismatches > maxReported) {
  console.log(`the ${maxReported} shortest documents that fail:`);
}
for (const { lines } of mismatches) console.log(lines.join("\n"));
if (counts.mismatches > maxReported) console.log(`... and ${counts.mismatches - maxReported} more mismatches`);

const seed = `seed ${summary.seed}`;
if (mode === "documents") {
  const { documents } = counts;
  if (documents !== summary.documents) fail(`checked ${documents} documents, the driver made ${summary.documents}`);
  const megabytes = (counts.documentBytes / 1e6).toFixed(1);
  console.log(`${documents} documents (${megabytes} MB, ${seed}) against canonicalize ${version} (RFC 8785) ` +
              `and the Appendix A reference, node ${process.version}, ${seconds.toFixed(1)} s:`);
  console.log(`  ${documents - counts.failedItems} of ${documents} documents identical in both forms; ` +
              `${summary.self_checks} internal checks passed in the driver ` +
              "(tree path, idempotence, on every eighth document)");
  console.log(`  exercised: ${summary.objects} objects, ${summary.members} members ` +
              `(${orderStats.nullsOmitted} null members omitted in Appendix A), ` +
              `${orderStats.orderDiffers} objects ordered differently by UTF-8 and UTF-16, ` +
              `${summary.arrays} arrays, ${summary.deep_documents} deep documents (to ${summary.deepest} levels), ` +
              `${summary.strings} strings with ${summary.raw_non_ascii} raw non-ASCII characters, ` +
              `${summary.short_escapes} short escapes, ${summary.escaped_slashes} \\/, ` +
              `${summary.u_escapes} \\u escapes, ${summary.surrogate_pair_escapes} surrogate pairs`);
  console.log(`  numbers: ${list(Object.entries(summary.numbers))}`);
  // The generator must keep exercising the two differences of Appendix A.
  const exercised = orderStats.orderDiffers >= documents / 20 && orderStats.nullsOmitted >= documents / 5;
  if (documents >= 1000 && !exercised) {
    fail("the documents no longer exercise Appendix A's differences (too few objects ordered " +
         "differently by UTF-8 and UTF-16, or too few null members)");
  }
} else {
  if (counts.numbers !== summary.total) fail(`checked ${counts.numbers} numbers, the driver made ${summary.total}`);
  const kinds = Object.entries(summary).filter(([kind]) => kind !== "seed" && kind !== "total");
  console.log(`${counts.numbers} doubles (${seed}) against String(x), node ${process.version}, ` +
              `${seconds.toFixed(1)} s:`);
  console.log(`  ${counts.numbers - counts.failedItems} of ${counts.numbers} identical`);
  console.log(`  generated: ${list(kinds)}`);
}
if (counts.mismatches > 0) fail(`${counts.mismatches} mismatches`);
