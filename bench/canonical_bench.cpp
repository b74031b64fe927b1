// bench/canonical_bench.cpp: the content hash of Agentic Protocol Context
// Packages (seed 001, section 6.6): parse + canonical JSON (json/canonical.hpp)
// + SHA-256 (core/sha256.hpp), next to SHA-256 alone over the same canonical
// bytes and to node's `canonicalize` package doing the same work, all in the
// same run.
//
// The program generates (the same bytes every run) --docs distinct packages of
// about 2 KB each: every field of section 6 (package_id, project_id,
// relay_version, title, status, package_type, review_type, created_at,
// created_by{id,type,session_id}, tags, decisions_made, open_questions,
// handoff_note, deliverables[{path,type,hash,size_bytes}], significance,
// content_md, the optional ones, some of them null) and a few x-* extensions
// (nested objects, numbers such as 1.0, 2.50 and 1.5e-3, an array holding a
// null, a non-ASCII name), pretty-printed with the members in a shuffled
// order, with non-ASCII text written both as UTF-8 and as \u escapes
// (surrogate pairs included) and the usual \n \t \" \/ escapes. It measures,
// single-threaded, the median of --rounds passes over all documents after one
// warm-up pass:
//
//   relay        json::canonicalizer (one, reused) canonicalize(doc, relay)
//                then agentctx::sha256 of the result: MB/s of input bytes,
//                documents/s.
//   SHA-256      agentctx::sha256 alone over each document's relay canonical
//                bytes (already made): the ceiling of the pipeline, MB/s of
//                canonical bytes. The ratio of the two is taken per document
//                (documents/s), so it does not depend on how much white space
//                the input carries. The two are timed in turn, a pass of
//                each per round, and the ratio is the median of the rounds'
//                ratios: the machine's speed drifts between passes, not
//                within a pair. (The ratio of MB/s of input bytes to MB/s of
//                canonical bytes is printed too; it is higher by the share
//                of white space.)
//   jcs          the same as relay in the RFC 8785 form.
//   parts        canonicalize without hashing; the same over the canonical
//                texts themselves (members already in order, no white space:
//                what re-verifying stored hashes costs); and, for scale,
//                simdjson's DOM parse alone (canonicalizer::parse_dom), which
//                the one-pass canonicalizer does not use, and a compact copy
//                of the input through simdjson's on-demand API (every value
//                visited and written without white space; nothing moved,
//                dropped or rewritten), which a canonicalizer built on that
//                API would do and more.
//   floors       three pipelines that do less than the relay one must, each
//                timed in turn with SHA-256 alone and reported as the same
//                per-document ratio: simdjson's DOM parse of the input
//                (writing nothing) + SHA-256 of the canonical bytes; the
//                canonicalizer over the canonical texts + SHA-256 of its
//                output; and the on-demand compact copy + SHA-256 of the
//                canonical bytes. They bound what the 40% goal asks for on
//                the machine at hand.
//   node         node with the `canonicalize` package (resolved from
//                tests/json/node/node_modules, or --node-modules DIR, or
//                $AGENTCTX_BENCH_NODE_MODULES), spawned by the bench over the
//                same documents (handed over as UTF-8 JS strings, decoded
//                before timing): JSON.parse + canonicalize + sha256 for RFC
//                8785, and for the relay form JSON.parse + a copy without null
//                members + canonicalize + sha256 (Appendix A sorts by UTF-8
//                bytes, canonicalize by UTF-16 code units: the same order for
//                these documents' names). Timed inside node after one
//                warm-up pass, median of the passes. Every document's digest
//                from node must equal ours, in both forms.
//
// Before timing, every document's canonical text must be a fixed point
// (canonicalizing it again gives the same bytes), and the pipeline's digests
// must equal SHA-256 over the canonical texts.
//
// Goals, each printed with PASS or MISS: the relay pipeline at >= 40% of the
// documents/s of SHA-256 alone; >= 10x node in each form. Figures vary by
// machine and load (the program prints the load average), so a MISS does not
// change the exit status: it exits 0, 1 on an error or when a digest differs
// from node's, 2 on bad usage. Without node, or without the package, the node
// baseline is skipped with the reason printed.
//
// Run it from an optimised build:
//   cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release
//   cmake --build build/release --target canonical_bench
//   (cd tests/json/node && npm ci)                       # the node baseline
//   build/release/bench/canonical_bench                  # 10,000 packages, 10 rounds
//   build/release/bench/canonical_bench --small          # CI smoke: 200 packages
//   build/release/bench/canonical_bench --node-modules /tmp/canon-node/node_modules
//   build/release/bench/canonical_bench --show 7         # package 7 and its canonical forms
#include <simdjson.h>
#include <sys/wait.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "agentctx/core/sha256.hpp"
#include "agentctx/json/canonical.hpp"

#include "bench_support.hpp"

#ifndef AGENTCTX_BENCH_NODE_MODULES
#define AGENTCTX_BENCH_NODE_MODULES ""
#endif

namespace {

using agentctx_bench::bench_clock;
using agentctx_bench::format;
using agentctx_bench::median;
using agentctx_bench::megabytes;
using agentctx_bench::bench_arguments;
using agentctx_bench::print_machine_note;
using agentctx_bench::random_source;
using agentctx_bench::scratch_directory;
using agentctx_bench::seconds_since;
using agentctx_bench::run_command;
using agentctx_bench::shell_quote;
using agentctx_bench::verdict;
using agentctx_bench::with_commas;

namespace json = agentctx::json;
using agentctx::sha256_digest;
using json::canonical_form;

constexpr double sha256_fraction_goal = 0.40;
constexpr double node_speedup_goal = 10.0;

constexpr const char* usage =
    "usage: canonical_bench [--small] [--docs N] [--rounds N] [--node-modules DIR] [--no-node] [--show I]\n"
    "  Times parse + canonical JSON + SHA-256 of generated ~2 KB Context Packages next to\n"
    "  SHA-256 alone over the canonical bytes and to node's `canonicalize` package.\n"
    "  --small             a smoke test: 200 packages, 3 rounds\n"
    "  --docs N            packages (default 10,000)\n"
    "  --rounds N          timed passes over all packages, after one warm-up (default 10;\n"
    "                      node runs at most 5)\n"
    "  --node-modules DIR  the node_modules holding `canonicalize` (default\n"
    "                      $AGENTCTX_BENCH_NODE_MODULES, else tests/json/node/node_modules)\n"
    "  --no-node           skip the node baseline\n"
    "  --show I            print package I (from 0), its canonical forms and their SHA-256, and exit\n";

struct options {
  bool small = false;
  std::size_t docs = 10'000;
  std::size_t rounds = 10;
  std::size_t node_rounds = 5;
  bool node = true;
  std::string node_modules;
  std::optional<std::size_t> show;
};

std::optional<options> parse_options(int argc, char** argv, int& exit_code) {
  options o;
  std::optional<std::size_t> docs, rounds;
  std::optional<std::string> node_modules;
  bool no_node = false;
  bench_arguments args("canonical_bench", usage);
  args.flag("--small", o.small)
      .flag("--no-node", no_node)
      .number("--docs", docs)
      .number("--rounds", rounds)
      .number("--show", o.show, 0)
      .text("--node-modules", node_modules);
  if (const auto code = args.read(argc, argv)) {
    exit_code = *code;
    return std::nullopt;
  }
  o.node = !no_node;
  if (o.small) {
    o.docs = 200;
    o.rounds = 3;
    o.node_rounds = 3;
  }
  if (docs) o.docs = *docs;
  if (rounds) {
    o.rounds = *rounds;
    o.node_rounds = std::min<std::size_t>(*rounds, 5);
  }
  if (node_modules) {
    o.node_modules = *node_modules;
  } else if (const char* env = std::getenv("AGENTCTX_BENCH_NODE_MODULES"); env != nullptr && *env != '\0') {
    o.node_modules = env;
  } else {
    o.node_modules = AGENTCTX_BENCH_NODE_MODULES;
  }
  return o;
}

// ---- packages --------------------------------------------------------------------------

/// A JSON value to pretty-print: a scalar's text, or an array or object of
/// nodes (an object's member names are plain UTF-8, quoted when printed).
struct json_node {
  enum class kind { scalar, array, object };
  kind type = kind::scalar;
  std::string text;                ///< a scalar's JSON text
  std::vector<std::string> names;  ///< an object's member names, one per item
  std::vector<json_node> items;

  static json_node scalar(std::string text) { return {kind::scalar, std::move(text), {}, {}}; }
  static json_node array() { return {kind::array, {}, {}, {}}; }
  static json_node object() { return {kind::object, {}, {}, {}}; }
  json_node& add(json_node item) { return items.emplace_back(std::move(item)); }
  json_node& add(std::string name, json_node item) {
    names.push_back(std::move(name));
    return items.emplace_back(std::move(item));
  }
};

/// The code point of the UTF-8 sequence at text[i] (the text is valid UTF-8);
/// advances i past it.
char32_t next_code_point(std::string_view text, std::size_t& i) {
  const auto byte = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(text[k])); };
  const char32_t b0 = byte(i);
  if (b0 < 0x80) {
    i += 1;
    return b0;
  }
  if (b0 < 0xE0) {
    const char32_t c = ((b0 & 0x1F) << 6) | (byte(i + 1) & 0x3F);
    i += 2;
    return c;
  }
  if (b0 < 0xF0) {
    const char32_t c = ((b0 & 0x0F) << 12) | ((byte(i + 1) & 0x3F) << 6) | (byte(i + 2) & 0x3F);
    i += 3;
    return c;
  }
  const char32_t c = ((b0 & 0x07) << 18) | ((byte(i + 1) & 0x3F) << 12) | ((byte(i + 2) & 0x3F) << 6) |
                     (byte(i + 3) & 0x3F);
  i += 4;
  return c;
}

void append_u_escape(std::string& out, unsigned unit) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\u%04x", unit);
  out += buffer;
}

/// `text` as a JSON string literal the way different producers write one:
/// the required escapes, and now and then a non-ASCII character as \uXXXX
/// (a surrogate pair beyond the BMP), a '/' as "\/", a tab as \t.
std::string literal(std::string_view text, random_source& r) {
  std::string out = "\"";
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t start = i;
    const char32_t c = next_code_point(text, i);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '/': out += r.one_in(6) ? "\\/" : "/"; break;
      default:
        if (c < 0x20) {
          append_u_escape(out, static_cast<unsigned>(c));
        } else if (c >= 0x80 && r.one_in(3)) {
          if (c >= 0x10000) {
            const char32_t v = c - 0x10000;
            append_u_escape(out, static_cast<unsigned>(0xD800 + (v >> 10)));
            append_u_escape(out, static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
          } else {
            append_u_escape(out, static_cast<unsigned>(c));
          }
        } else {
          out.append(text.substr(start, i - start));
        }
    }
  }
  out += '"';
  return out;
}

void pretty_print(std::string& out, const json_node& node, std::string_view indent, std::size_t depth,
                  random_source& r) {
  if (node.type == json_node::kind::scalar) {
    out += node.text;
    return;
  }
  const bool is_object = node.type == json_node::kind::object;
  out += is_object ? '{' : '[';
  if (node.items.empty()) {
    out += is_object ? '}' : ']';
    return;
  }
  for (std::size_t i = 0; i < node.items.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    for (std::size_t d = 0; d <= depth; ++d) out += indent;
    if (is_object) {
      out += literal(node.names[i], r);
      out += ": ";
    }
    pretty_print(out, node.items[i], indent, depth + 1, r);
  }
  out += '\n';
  for (std::size_t d = 0; d < depth; ++d) out += indent;
  out += is_object ? '}' : ']';
}

/// Deterministic Context Packages (seed 001, section 6): document i is the
/// same bytes on every run and machine, and differs from every other.
class package_generator {
 public:
  package_generator() {
    static constexpr const char* plain[] = {
        "the",      "archive",  "index",    "session",  "handoff",  "layer",    "retrieval", "dashboard", "migration",
        "schema",   "agent",    "review",   "deposit",  "package",  "fact",     "query",     "cache",     "vector",
        "filter",   "commit",   "branch",   "test",     "deploy",   "release",  "latency",   "budget",    "token",
        "embedding", "chunk",   "orient",   "pull",     "digest",   "project",  "timeline",  "snapshot",  "replay",
        "and",      "of",       "to",       "for",      "with",     "on",       "is",        "was",       "not",
        "should",   "must",     "after",    "before",   "every",    "new",      "old",       "first",     "last"};
    static constexpr const char* unicode[] = {"naïve", "café", "→", "—", "“done”", "résumé", "日本語", "Привет",
                                              "über", "✓", "😀", "🚀", "±0.5", "µs", "Zürich", "≤"};
    for (const char* w : plain) words_.emplace_back(w);
    for (const char* w : unicode) unicode_words_.emplace_back(w);
  }

  std::string make(std::size_t index) const {
    random_source r(0xC0FFEEull ^ (static_cast<std::uint64_t>(index) * 0x9E3779B97F4A7C15ull));
    static constexpr const char* statuses[] = {"draft", "complete", "awaiting_review", "revision_requested"};
    static constexpr const char* package_types[] = {"standard", "milestone",   "decision", "handoff",
                                                    "auto_deposit", "analysis", "question", "orchestrator_report",
                                                    "x-acme-retro"};
    static constexpr const char* review_types[] = {"none", "human", "agent"};
    static constexpr const char* actor_types[] = {"human", "agent", "script"};
    static constexpr const char* projects[] = {"proj_dev_relay", "proj_agentctx", "proj_search_infra",
                                               "proj_dashboard", "proj_billing_v2"};
    static constexpr const char* file_types[] = {"md", "json", "ts", "sql", "cpp", "py"};

    json_node doc = json_node::object();
    doc.add("package_id", str("pkg_" + hex(r, 32), r));
    doc.add("project_id", str(projects[r.below(std::size(projects))], r));
    doc.add("relay_version", str("0.1", r));
    doc.add("title", str(sentence(r, 4 + r.below(7), '\0'), r));
    doc.add("status", str(statuses[r.below(std::size(statuses))], r));
    doc.add("package_type", str(package_types[r.below(std::size(package_types))], r));
    doc.add("review_type", str(review_types[r.below(std::size(review_types))], r));
    doc.add("created_at", str(timestamp(r), r));

    json_node created_by = json_node::object();
    created_by.add("id", str(r.one_in(2) ? word(r) : "agent-" + hex(r, 6), r));
    created_by.add("type", str(actor_types[r.below(std::size(actor_types))], r));
    created_by.add("session_id", r.one_in(3) ? json_node::scalar("null") : str("sess_" + hex(r, 12), r));
    shuffle(created_by, r);
    doc.add("created_by", std::move(created_by));

    json_node tags = json_node::array();
    for (std::size_t i = 0, n = 2 + r.below(5); i < n; ++i) tags.add(str(word(r), r));
    doc.add("tags", std::move(tags));
    json_node decisions = json_node::array();
    for (std::size_t i = 0, n = 1 + r.below(3); i < n; ++i) decisions.add(str(sentence(r, 4 + r.below(8), '.'), r));
    doc.add("decisions_made", std::move(decisions));
    json_node questions = json_node::array();
    for (std::size_t i = 0, n = r.below(3); i < n; ++i) questions.add(str(sentence(r, 4 + r.below(6), '?'), r));
    doc.add("open_questions", std::move(questions));
    doc.add("handoff_note", str(sentence(r, 8 + r.below(14), '.'), r));

    json_node deliverables = json_node::array();
    for (std::size_t i = 0, n = 1 + r.below(3); i < n; ++i) {
      const char* type = file_types[r.below(std::size(file_types))];
      json_node d = json_node::object();
      std::string path = r.one_in(2) ? "docs/" : "src/";
      path += word(r);
      path += '/';
      path += word(r);
      d.add("path", str(path + "." + type, r));
      d.add("type", str(type, r));
      if (!r.one_in(4)) d.add("hash", str("sha256:" + hex(r, 64), r));
      if (!r.one_in(4)) d.add("size_bytes", json_node::scalar(std::to_string(r.below(200'000))));
      shuffle(d, r);
      deliverables.add(std::move(d));
    }
    doc.add("deliverables", std::move(deliverables));
    doc.add("significance", json_node::scalar(std::to_string(1 + r.below(10))));

    // The optional fields, some null (left out of the relay form).
    if (r.one_in(3)) doc.add("description", str(sentence(r, 8 + r.below(12), '.'), r));
    doc.add("estimated_next_actor", r.one_in(3) ? json_node::scalar("null") : str(r.one_in(2) ? "human" : "agent", r));
    doc.add("parent_package_id", r.one_in(2) ? json_node::scalar("null") : str("pkg_" + hex(r, 32), r));
    doc.add("topic", r.one_in(3) ? json_node::scalar("null") : str(word(r), r));
    if (r.one_in(2)) doc.add("artifact_type", json_node::scalar("null"));

    // Extensions (section 12.1).
    json_node git = json_node::object();
    git.add("commit", str(hex(r, 40), r));
    git.add("branch", str(r.one_in(2) ? "main" : "feature/" + word(r), r));
    git.add("dirty", json_node::scalar(r.one_in(3) ? "true" : "false"));
    shuffle(git, r);
    doc.add("x-relay-git", std::move(git));
    json_node metrics = json_node::object();
    metrics.add("tokens_in", json_node::scalar(std::to_string(r.below(200'000))));
    metrics.add("tokens_out", json_node::scalar(std::to_string(r.below(8'000))));
    metrics.add("cost_usd", json_node::scalar(format("%.4f", static_cast<double>(r.below(100'000)) / 1e4)));
    metrics.add("latency_ms", json_node::scalar(format("%.1f", static_cast<double>(r.below(100'000)) / 10.0)));
    metrics.add("cache_hit_ratio", json_node::scalar(r.one_in(2) ? "1.0" : format("%.2f0", static_cast<double>(r.below(100)) / 100.0)));
    metrics.add("decay", json_node::scalar(format("%.1fe-3", static_cast<double>(1 + r.below(99)) / 10.0)));
    shuffle(metrics, r);
    doc.add("x-agentctx-metrics", std::move(metrics));
    if (r.one_in(3)) {
      json_node retries = json_node::array();
      retries.add(json_node::scalar("0"));
      retries.add(json_node::scalar("null"));
      retries.add(json_node::scalar(std::to_string(r.below(5))));
      doc.add("x-retries", std::move(retries));
    }
    if (r.one_in(2)) doc.add("x-résumé", str(sentence(r, 3 + r.below(5), '.'), r));

    // content_md makes the package about the target size (1.3 to 2.4 KB).
    const std::size_t target = 1'300 + r.below(1'100);
    std::string without_content;
    const std::string_view indent = r.one_in(4) ? "    " : "  ";
    random_source printing(r.next());
    shuffle(doc, r);
    const std::size_t content_at = r.below(doc.items.size() + 1);
    pretty_print(without_content, doc, indent, 0, printing);
    const std::size_t content_bytes = target > without_content.size() + 100 ? target - without_content.size() : 100;
    doc.names.insert(doc.names.begin() + static_cast<std::ptrdiff_t>(content_at), "content_md");
    doc.items.insert(doc.items.begin() + static_cast<std::ptrdiff_t>(content_at),
                     json_node::scalar(literal(markdown(r, content_bytes), r)));
    std::string text;
    text.reserve(target + 256);
    random_source printing_again(printing.next());
    pretty_print(text, doc, indent, 0, printing_again);
    text += '\n';
    return text;
  }

 private:
  static std::string hex(random_source& r, std::size_t n) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += digits[r.below(16)];
    return s;
  }
  static json_node str(std::string_view text, random_source& r) { return json_node::scalar(literal(text, r)); }
  static std::string timestamp(random_source& r) {
    // One draw per statement: the order in which arguments are evaluated is
    // unspecified, and the documents must not depend on the compiler.
    const std::size_t month = 1 + r.below(12);
    const std::size_t day = 1 + r.below(28);
    const std::size_t hour = r.below(24);
    const std::size_t minute = r.below(60);
    const std::size_t second = r.below(60);
    const char* fraction = r.one_in(3) ? ".123" : "";
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "2026-%02zu-%02zuT%02zu:%02zu:%02zu%sZ", month, day, hour, minute, second,
                  fraction);
    return buffer;
  }
  static void shuffle(json_node& object, random_source& r) {
    for (std::size_t i = object.items.size(); i > 1; --i) {
      const std::size_t j = r.below(i);
      std::swap(object.items[i - 1], object.items[j]);
      std::swap(object.names[i - 1], object.names[j]);
    }
  }
  const std::string& word(random_source& r) const {
    if (r.one_in(14)) return unicode_words_[r.below(unicode_words_.size())];
    return words_[r.below(words_.size())];
  }
  std::string sentence(random_source& r, std::size_t words, char end) const {
    std::string s;
    for (std::size_t i = 0; i < words; ++i) {
      if (i != 0) s += r.one_in(9) ? ", " : " ";
      s += word(r);
    }
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
    if (end != '\0') s += end;
    return s;
  }
  std::string markdown(random_source& r, std::size_t bytes) const {
    std::string md = "# " + sentence(r, 3 + r.below(4), '\0') + "\n\n";
    // Appended piece by piece: the documents must not depend on the order
    // in which a compiler evaluates the operands of one expression.
    const auto add = [&md](std::string_view piece) { md += piece; };
    while (md.size() < bytes) {
      switch (r.below(5)) {
        case 0:
          add("- ");
          add(sentence(r, 4 + r.below(8), '\0'));
          add("\n- `");
          add(word(r));
          add("()` ");
          add(word(r));
          add("\n\n");
          break;
        case 1:
          add("```cpp\nauto ");
          add(word(r));
          add(" = load(\"");
          add(word(r));
          add(".json\");\n\tif (!ok) return \"");
          add(word(r));
          add("\\n\";\n```\n\n");
          break;
        case 2:
          add("| ");
          add(word(r));
          add(" | ");
          add(std::to_string(r.below(1000)));
          add(" ms |\n|---|---|\n\n");
          break;
        default:
          add(sentence(r, 12 + r.below(30), '.'));
          add(" ");
          add(sentence(r, 6 + r.below(12), '.'));
          add("\n\n");
      }
    }
    return md;
  }

  std::vector<std::string> words_;
  std::vector<std::string> unicode_words_;
};

// ---- simdjson's on-demand API, for scale -------------------------------------------------

/// A compact copy of JSON text through simdjson's on-demand API: every value
/// visited in document order and written without white space, but no member
/// moved, no null left out, no escape or number rewritten. It does less than
/// a canonicalizer built on that API would, so its time bounds such a
/// canonicalizer from below. Writes at `out` (room for the input's size: the
/// copy is never longer) and returns the end, or nullptr on an error.
class ondemand_compact_copy {
 public:
  char* copy(const simdjson::padded_string& text, char* out) {
    simdjson::ondemand::document doc;
    if (parser_.iterate(text).get(doc) != simdjson::SUCCESS) return nullptr;
    simdjson::ondemand::value root;
    if (doc.get_value().get(root) != simdjson::SUCCESS) return nullptr;
    return value(root, out);  // (white space or text after the root is not looked at)
  }

 private:
  static char* put(char* out, std::string_view text) {
    std::memcpy(out, text.data(), text.size());
    return out + text.size();
  }
  // A token as raw_json_token() gives it, without the white space after it.
  static std::string_view token(std::string_view raw) {
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t')) {
      raw.remove_suffix(1);
    }
    return raw;
  }

  char* value(simdjson::ondemand::value v, char* out) {
    simdjson::ondemand::json_type type;
    if (v.type().get(type) != simdjson::SUCCESS) return nullptr;
    switch (type) {
      case simdjson::ondemand::json_type::object: {
        simdjson::ondemand::object object;
        if (v.get_object().get(object) != simdjson::SUCCESS) return nullptr;
        *out++ = '{';
        bool first = true;
        for (auto member : object) {
          simdjson::ondemand::field field;
          if (std::move(member).get(field) != simdjson::SUCCESS) return nullptr;
          if (!first) *out++ = ',';
          first = false;
          // The name as written: from after its opening quote to the quote
          // that closes it (stage 1 found the pair).
          const char* const name = field.key().raw();
          const char* end = name;
          while (*end != '"') end += *end == '\\' ? 2 : 1;
          *out++ = '"';
          out = put(out, std::string_view(name, static_cast<std::size_t>(end - name)));
          *out++ = '"';
          *out++ = ':';
          out = value(field.value(), out);
          if (out == nullptr) return nullptr;
        }
        *out++ = '}';
        return out;
      }
      case simdjson::ondemand::json_type::array: {
        simdjson::ondemand::array array;
        if (v.get_array().get(array) != simdjson::SUCCESS) return nullptr;
        *out++ = '[';
        bool first = true;
        for (auto element : array) {
          simdjson::ondemand::value item;
          if (element.get(item) != simdjson::SUCCESS) return nullptr;
          if (!first) *out++ = ',';
          first = false;
          out = value(item, out);
          if (out == nullptr) return nullptr;
        }
        *out++ = ']';
        return out;
      }
      case simdjson::ondemand::json_type::string:
      case simdjson::ondemand::json_type::number: return put(out, token(v.raw_json_token()));
      case simdjson::ondemand::json_type::boolean: {
        bool b = false;
        if (v.get_bool().get(b) != simdjson::SUCCESS) return nullptr;
        return put(out, b ? "true" : "false");
      }
      case simdjson::ondemand::json_type::null: {
        bool null = false;
        if (v.is_null().get(null) != simdjson::SUCCESS || !null) return nullptr;
        return put(out, "null");
      }
    }
    return nullptr;
  }

  simdjson::ondemand::parser parser_;
};

// ---- timing ----------------------------------------------------------------------------

/// Per-pass seconds of `pass` (which returns false on an error): one warm-up
/// pass, then `rounds` timed ones; nullopt if a pass failed.
template <class Pass>
std::optional<std::vector<double>> time_passes(std::size_t rounds, Pass&& pass) {
  if (!pass()) return std::nullopt;
  std::vector<double> seconds;
  for (std::size_t i = 0; i < rounds; ++i) {
    const auto start = bench_clock::now();
    if (!pass()) return std::nullopt;
    seconds.push_back(seconds_since(start));
  }
  return seconds;
}

/// Per-pass seconds of `first` and `second` timed in turn, one pass of each
/// per round (after one warm-up of each), so that both see the machine in
/// the same state: on a shared machine its speed drifts by tens of percent
/// over seconds. nullopt if a pass failed.
template <class First, class Second>
std::optional<std::pair<std::vector<double>, std::vector<double>>> time_in_turn(std::size_t rounds, First&& first,
                                                                                 Second&& second) {
  if (!first() || !second()) return std::nullopt;
  std::pair<std::vector<double>, std::vector<double>> seconds;
  for (std::size_t i = 0; i < rounds; ++i) {
    auto start = bench_clock::now();
    if (!first()) return std::nullopt;
    seconds.first.push_back(seconds_since(start));
    start = bench_clock::now();
    if (!second()) return std::nullopt;
    seconds.second.push_back(seconds_since(start));
  }
  return seconds;
}

struct figure {
  double seconds = 0;  ///< median seconds of one pass over all documents
  std::uint64_t bytes = 0;
  std::size_t docs = 0;
  double mb_per_second() const { return megabytes(bytes) / seconds; }
  double docs_per_second() const { return static_cast<double>(docs) / seconds; }
};

void print_header() {
  std::printf("  %-58s %9s %11s %9s\n", "", "MB/s", "docs/s", "us/doc");
}

void print_row(const std::string& name, const figure& f, const std::string& note) {
  std::printf("  %-58s %9.1f %11s %9.2f  %s\n", name.c_str(), f.mb_per_second(),
              with_commas(static_cast<std::uint64_t>(f.docs_per_second())).c_str(), f.seconds * 1e6 / static_cast<double>(f.docs),
              note.c_str());
}

// ---- the node baseline -----------------------------------------------------------------

// Run as `node canonical_bench.mjs NODE_MODULES DOCS OUT_PREFIX ROUNDS`. DOCS
// holds the documents separated by NUL bytes (JSON text has none). Prints one
// JSON line of figures; writes the 32-byte digests of every document to
// OUT_PREFIX.jcs and OUT_PREFIX.relay.
constexpr std::string_view node_script = R"js(
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modulesDir, docsPath, outPrefix, roundsText] = process.argv.slice(2);
const rounds = Number(roundsText);
// The package's entry from its manifest: versions differ (2.x: CommonJS
// "main"; 4.x: ESM "exports" with "import" only; 5.x adds "default").
const packageDir = join(modulesDir, 'canonicalize');
const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
let target = manifest.exports;
if (target !== null && typeof target === 'object' && '.' in target) target = target['.'];
while (target !== null && typeof target === 'object') {
  target = target.import ?? target.node ?? target.default ?? target.require;
}
const entry = join(packageDir, typeof target === 'string' ? target : manifest.main ?? 'index.js');
const version = manifest.version;
const imported = await import(pathToFileURL(entry).href);
const canonicalize = typeof imported.default === 'function' ? imported.default : imported.canonicalize;

const bytes = readFileSync(docsPath);
const docs = [];
for (let start = 0; start < bytes.length;) {
  let end = bytes.indexOf(0, start);
  if (end < 0) end = bytes.length;
  docs.push(bytes.toString('utf8', start, end));
  start = end + 1;
}

// Appendix A leaves out members whose value is null (nulls in arrays stay).
function dropNullMembers(v) {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = dropNullMembers(v[i]);
    return v;
  }
  const out = {};
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (x !== null) out[k] = dropNullMembers(x);
  }
  return out;
}

function jcsPass(digests) {
  for (let i = 0; i < docs.length; i++) {
    digests[i] = createHash('sha256').update(canonicalize(JSON.parse(docs[i]))).digest();
  }
}
function relayPass(digests) {
  for (let i = 0; i < docs.length; i++) {
    digests[i] = createHash('sha256').update(canonicalize(dropNullMembers(JSON.parse(docs[i])))).digest();
  }
}

function timePasses(pass, digests) {
  pass(digests);  // warm-up
  const seconds = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    pass(digests);
    seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  return seconds;
}

const jcsDigests = new Array(docs.length);
const relayDigests = new Array(docs.length);
const jcs = timePasses(jcsPass, jcsDigests);
const relay = timePasses(relayPass, relayDigests);
writeFileSync(outPrefix + '.jcs', Buffer.concat(jcsDigests));
writeFileSync(outPrefix + '.relay', Buffer.concat(relayDigests));
console.log(JSON.stringify({ node: process.version, canonicalize: version, entry, docs: docs.length, jcs, relay }));
)js";

bool write_file(const std::string& path, std::string_view bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && written;
}

std::optional<std::string> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  std::string out;
  char buffer[65536];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) out.append(buffer, n);
  std::fclose(f);
  return out;
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const std::size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

/// The line of node's standard error that names the error ("Error: ..."),
/// else its last line.
std::string error_line(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    if (line.find("Error") != std::string_view::npos && line.find(':') != std::string_view::npos) return std::string(line);
    start = end + 1;
  }
  return last_line(text);
}

struct node_figures {
  std::string node_version;
  std::string package_version;
  std::string entry;
  figure jcs;
  figure relay;
  std::vector<sha256_digest> jcs_digests;
  std::vector<sha256_digest> relay_digests;
};

/// The node baseline over `docs`, or the reason it was skipped.
struct node_outcome {
  std::optional<node_figures> figures;
  std::string skipped_because;
};

node_outcome run_node(const options& o, const std::vector<std::string>& docs, std::uint64_t input_bytes) {
  const auto skipped = [](std::string why) { return node_outcome{std::nullopt, std::move(why)}; };
  if (!o.node) return skipped("--no-node");
  const auto [version, version_status] = run_command("node --version 2>/dev/null");
  if (version_status != 0 || version.empty() || version[0] != 'v') return skipped("node is not on PATH");
  if (o.node_modules.empty()) return skipped("no node_modules directory given (--node-modules)");
  std::error_code ignored;
  if (!std::filesystem::exists(o.node_modules + "/canonicalize/package.json", ignored)) {
    return skipped("the canonicalize package is not installed in " + o.node_modules +
                   " (run `npm ci` in tests/json/node, or pass --node-modules)");
  }
  auto dir = scratch_directory::create("canonical_bench");
  if (!dir) return skipped("cannot make a temporary directory: " + dir.error().describe());
  std::string all;
  for (const std::string& d : docs) {
    all += d;
    all += '\0';
  }
  if (!all.empty()) all.pop_back();
  const std::string script = dir->file("canonical_bench.mjs");
  const std::string docs_path = dir->file("docs.bin");
  const std::string out_prefix = dir->file("digests");
  const std::string errors = dir->file("node.stderr");
  if (!write_file(script, node_script) || !write_file(docs_path, all)) {
    return skipped("cannot write the node script and documents under " + dir->path());
  }
  const std::string command = "node " + shell_quote(script) + " " + shell_quote(o.node_modules) + " " +
                              shell_quote(docs_path) + " " + shell_quote(out_prefix) + " " +
                              std::to_string(o.node_rounds) + " 2>" + shell_quote(errors);
  const auto [output, status] = run_command(command);
  if (status != 0) {
    const std::string why = error_line(read_file(errors).value_or(""));
    return skipped("node " + last_line(version) + " failed (exit status " + std::to_string(status) + "): " + why);
  }

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string line = last_line(output);
  if (parser.parse(line).get(root) != simdjson::SUCCESS) return skipped("unreadable node output: " + line);
  node_figures f;
  std::string_view text;
  if (root["node"].get(text) == simdjson::SUCCESS) f.node_version = text;
  if (root["canonicalize"].get(text) == simdjson::SUCCESS) f.package_version = text;
  if (root["entry"].get(text) == simdjson::SUCCESS) f.entry = text;
  for (const bool is_jcs : {true, false}) {
    std::vector<double> seconds;
    simdjson::dom::array passes;
    if (root[is_jcs ? "jcs" : "relay"].get(passes) != simdjson::SUCCESS) return skipped("node output lacks timings");
    for (simdjson::dom::element pass : passes) {
      double s = 0;
      if (pass.get(s) == simdjson::SUCCESS) seconds.push_back(s);
    }
    if (seconds.empty()) return skipped("node output lacks timings");
    (is_jcs ? f.jcs : f.relay) = figure{median(seconds), input_bytes, docs.size()};
    const std::optional<std::string> digests = read_file(out_prefix + (is_jcs ? ".jcs" : ".relay"));
    if (!digests || digests->size() != docs.size() * 32) return skipped("node wrote no digests or the wrong number");
    auto& out = is_jcs ? f.jcs_digests : f.relay_digests;
    out.resize(docs.size());
    for (std::size_t i = 0; i < docs.size(); ++i) {
      std::copy_n(reinterpret_cast<const std::uint8_t*>(digests->data()) + 32 * i, 32, out[i].begin());
    }
  }
  return node_outcome{std::move(f), {}};
}

std::size_t count_mismatches(const std::vector<sha256_digest>& a, const std::vector<sha256_digest>& b) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i] ? 1 : 0;
  return n;
}

// ---- the run ---------------------------------------------------------------------------

int show(std::size_t index) {
  const std::string doc = package_generator().make(index);
  std::printf("package %zu (%zu bytes):\n%s", index, doc.size(), doc.c_str());
  json::canonicalizer c;
  for (const canonical_form form : {canonical_form::relay, canonical_form::jcs}) {
    auto text = c.canonicalize(doc, form);
    if (!text) {
      std::fprintf(stderr, "canonical_bench: error: %s\n", text.error().describe().c_str());
      return 1;
    }
    std::printf("\n%s form (%zu bytes), SHA-256 %s:\n%.*s\n", form == canonical_form::relay ? "relay" : "jcs",
                text->size(), agentctx::to_hex(agentctx::sha256(*text)).c_str(), static_cast<int>(text->size()),
                text->data());
  }
  return 0;
}

int run(const options& o) {
  if (o.show) return show(*o.show);
  std::printf("canonical_bench: parse + canonical JSON + SHA-256 of Agentic Protocol Context Packages\n");
  print_machine_note();

  const package_generator generator;
  std::vector<std::string> docs;
  docs.reserve(o.docs);
  std::uint64_t input_bytes = 0;
  std::size_t smallest = SIZE_MAX, largest = 0;
  for (std::size_t i = 0; i < o.docs; ++i) {
    docs.push_back(generator.make(i));
    input_bytes += docs.back().size();
    smallest = std::min(smallest, docs.back().size());
    largest = std::max(largest, docs.back().size());
  }

  // The canonical texts (for SHA-256 alone) and a check that each is a fixed
  // point of the canonicalizer, outside the timings.
  json::canonicalizer c;
  std::vector<std::string> canonical[2];  // [0] relay, [1] jcs
  std::uint64_t canonical_bytes[2] = {0, 0};
  for (int form = 0; form < 2; ++form) {
    const canonical_form f = form == 0 ? canonical_form::relay : canonical_form::jcs;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      auto text = c.canonicalize(docs[i], f);
      if (!text) {
        std::fprintf(stderr, "canonical_bench: error: document %zu: %s\n", i, text.error().describe().c_str());
        return 1;
      }
      canonical[form].emplace_back(*text);
      canonical_bytes[form] += text->size();
      auto again = c.canonicalize(canonical[form].back(), f);
      if (!again || *again != canonical[form].back()) {
        std::fprintf(stderr, "canonical_bench: error: document %zu: canonical form is not a fixed point\n", i);
        return 1;
      }
    }
  }
  std::printf("documents: %s generated packages, %s MB pretty-printed (%s bytes on average, %zu..%zu); canonical: "
              "relay %s MB (%.2fx), jcs %s MB\n",
              with_commas(docs.size()).c_str(), format("%.2f", megabytes(input_bytes)).c_str(),
              with_commas(input_bytes / std::max<std::size_t>(docs.size(), 1)).c_str(), smallest, largest,
              format("%.2f", megabytes(canonical_bytes[0])).c_str(),
              static_cast<double>(canonical_bytes[0]) / static_cast<double>(input_bytes),
              format("%.2f", megabytes(canonical_bytes[1])).c_str());

  // ---- ours
  // The pipeline and SHA-256 alone are timed in turn, a pass of each per
  // round; their ratio is the median of the rounds' ratios.
  std::vector<sha256_digest> digests[2];
  figure pipeline[2], sha_alone[2];
  double sha_fraction[2] = {0, 0};
  for (int form = 0; form < 2; ++form) {
    const canonical_form f = form == 0 ? canonical_form::relay : canonical_form::jcs;
    digests[form].resize(docs.size());
    std::vector<sha256_digest> alone(docs.size());
    std::string failure;
    auto seconds = time_in_turn(
        o.rounds,
        [&] {
          for (std::size_t i = 0; i < docs.size(); ++i) {
            auto text = c.canonicalize(docs[i], f);
            if (!text) {
              failure = text.error().describe();
              return false;
            }
            digests[form][i] = agentctx::sha256(*text);
          }
          return true;
        },
        [&] {
          for (std::size_t i = 0; i < docs.size(); ++i) alone[i] = agentctx::sha256(canonical[form][i]);
          return true;
        });
    if (!seconds) {
      std::fprintf(stderr, "canonical_bench: error: %s\n", failure.c_str());
      return 1;
    }
    pipeline[form] = {median(seconds->first), input_bytes, docs.size()};
    sha_alone[form] = {median(seconds->second), canonical_bytes[form], docs.size()};
    std::vector<double> fractions;
    for (std::size_t r = 0; r < o.rounds; ++r) fractions.push_back(seconds->second[r] / seconds->first[r]);
    sha_fraction[form] = median(fractions);
    if (alone != digests[form]) {
      std::fprintf(stderr, "canonical_bench: error: the pipeline's digests differ from SHA-256 of its output\n");
      return 1;
    }
  }

  // Parts (relay): canonical text without the hash, from the documents and
  // from their canonical forms; simdjson's DOM parse alone for scale.
  figure parse_only, canonical_only, recanonical, ondemand_only;
  // The documents padded for simdjson's on-demand API, a buffer for its
  // compact copies, and a check (outside the timings) that each copy holds
  // every value: canonicalized, it gives the document's canonical form.
  std::vector<simdjson::padded_string> padded(docs.begin(), docs.end());
  std::string copy_buffer(largest, '\0');
  ondemand_compact_copy ondemand;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    char* const end = ondemand.copy(padded[i], copy_buffer.data());
    auto again = end == nullptr ? std::nullopt
                                : std::optional(c.canonicalize(std::string_view(
                                      copy_buffer.data(), static_cast<std::size_t>(end - copy_buffer.data()))));
    if (!again || !*again || **again != canonical[0][i]) {
      std::fprintf(stderr, "canonical_bench: error: document %zu: the on-demand copy lost a value\n", i);
      return 1;
    }
  }
  {
    auto seconds = time_passes(o.rounds, [&] {
      for (const std::string& d : docs) {
        if (!c.parse_dom(d)) return false;
      }
      return true;
    });
    if (seconds) parse_only = {median(*seconds), input_bytes, docs.size()};
    auto ondemand_seconds = time_passes(o.rounds, [&] {
      for (const simdjson::padded_string& d : padded) {
        if (ondemand.copy(d, copy_buffer.data()) == nullptr) return false;
      }
      return true;
    });
    if (ondemand_seconds) ondemand_only = {median(*ondemand_seconds), input_bytes, docs.size()};
    std::size_t sink = 0;
    const auto canonicalize_all = [&](const std::vector<std::string>& texts) {
      return time_passes(o.rounds, [&] {
        for (const std::string& d : texts) {
          auto text = c.canonicalize(d);
          if (!text) return false;
          sink += text->size();
        }
        return true;
      });
    };
    auto canonical_seconds = canonicalize_all(docs);
    if (canonical_seconds) canonical_only = {median(*canonical_seconds), input_bytes, docs.size()};
    auto again_seconds = canonicalize_all(canonical[0]);
    if (again_seconds) recanonical = {median(*again_seconds), canonical_bytes[0], docs.size()};
    if (!seconds || !ondemand_seconds || !canonical_seconds || !again_seconds || sink == 0) {
      std::fprintf(stderr, "canonical_bench: error: a document failed to parse\n");
      return 1;
    }
  }

  // Floors of the 40% goal (relay): three pipelines that do less than the
  // canonicalizer must, each timed in turn with SHA-256 alone like the
  // pipeline above: simdjson's DOM parse (which writes nothing) and then
  // SHA-256 over the canonical bytes; the canonicalizer over text that is
  // canonical already (no white space, nothing to reorder) and then SHA-256
  // of its output; and the on-demand compact copy and then SHA-256 over the
  // canonical bytes.
  double floor_fraction[3] = {0, 0, 0};
  {
    std::size_t sink = 0;  // keeps the digests alive
    const auto fraction_beside_sha = [&](auto&& lighter) -> std::optional<double> {
      auto seconds = time_in_turn(o.rounds, lighter, [&] {
        for (const std::string& text : canonical[0]) sink += agentctx::sha256(text)[0];
        return true;
      });
      if (!seconds) return std::nullopt;
      std::vector<double> fractions;
      for (std::size_t r = 0; r < o.rounds; ++r) fractions.push_back(seconds->second[r] / seconds->first[r]);
      return median(fractions);
    };
    auto simdjson_floor = fraction_beside_sha([&] {
      for (std::size_t i = 0; i < docs.size(); ++i) {
        if (!c.parse_dom(docs[i])) return false;
        sink += agentctx::sha256(canonical[0][i])[0];
      }
      return true;
    });
    auto canonical_floor = fraction_beside_sha([&] {
      for (std::size_t i = 0; i < docs.size(); ++i) {
        auto text = c.canonicalize(canonical[0][i]);
        if (!text || agentctx::sha256(*text) != digests[0][i]) return false;
      }
      return true;
    });
    auto ondemand_floor = fraction_beside_sha([&] {
      for (std::size_t i = 0; i < docs.size(); ++i) {
        if (ondemand.copy(padded[i], copy_buffer.data()) == nullptr) return false;
        sink += agentctx::sha256(canonical[0][i])[0];
      }
      return true;
    });
    if (!simdjson_floor || !canonical_floor || !ondemand_floor) {
      std::fprintf(stderr, "canonical_bench: error: a document failed to parse or hashed differently\n");
      return 1;
    }
    if (sink == 1) std::puts("");  // never: a use of the digests the compiler cannot drop
    floor_fraction[0] = *simdjson_floor;
    floor_fraction[1] = *canonical_floor;
    floor_fraction[2] = *ondemand_floor;
  }

  std::printf("\nagentctx, 1 thread, one reused json::canonicalizer; median of %zu passes over all documents, "
              "after one warm-up (SHA-256: %s):\n",
              o.rounds, agentctx::sha256_hasher().uses_openssl() ? "OpenSSL" : "portable fallback");
  print_header();
  print_row("relay: parse + canonicalize + SHA-256", pipeline[0], "MB/s of input bytes");
  print_row("SHA-256 alone over the relay canonical bytes", sha_alone[0], "MB/s of canonical bytes (the ceiling)");
  print_row("jcs (RFC 8785): parse + canonicalize + SHA-256", pipeline[1], "MB/s of input bytes");
  print_row("SHA-256 alone over the jcs canonical bytes", sha_alone[1], "MB/s of canonical bytes");
  std::puts("  parts (relay):");
  print_row("  parse + canonicalize, no hash", canonical_only, "MB/s of input bytes");
  print_row("  the same over the canonical texts (nothing to reorder)", recanonical, "MB/s of canonical bytes");
  print_row("  for scale: simdjson DOM parse alone (not used above)", parse_only, "MB/s of input bytes");
  print_row("  for scale: simdjson on-demand compact copy (unused)", ondemand_only, "MB/s of input bytes");
  const double relay_fraction = sha_fraction[0];
  const double jcs_fraction = sha_fraction[1];
  std::printf("  relay pipeline: %.1f%% of the documents/s of SHA-256 alone (median of the rounds' ratios); jcs: %.1f%%\n"
              "  (as MB/s of input bytes over MB/s of canonical bytes: relay %.1f%%, jcs %.1f%%)\n",
              100 * relay_fraction, 100 * jcs_fraction, 100 * pipeline[0].mb_per_second() / sha_alone[0].mb_per_second(),
              100 * pipeline[1].mb_per_second() / sha_alone[1].mb_per_second());
  std::printf("  floors, per document against SHA-256 alone as above (each timed in turn with it):\n"
              "    simdjson DOM parse of the input (writes nothing) + SHA-256 of the canonical bytes     %.1f%%\n"
              "    canonicalize the canonical texts (nothing to reorder or drop) + SHA-256            %.1f%%\n"
              "    on-demand compact copy of the input (nothing moved, dropped or rewritten) + SHA-256 %.1f%%\n",
              100 * floor_fraction[0], 100 * floor_fraction[1], 100 * floor_fraction[2]);

  // ---- node
  std::printf("\nnode baseline (JSON.parse + canonicalize + crypto sha256, timed inside node, median of %zu passes "
              "after one warm-up):\n",
              o.node_rounds);
  const node_outcome node = run_node(o, docs, input_bytes);
  bool mismatch = false;
  if (node.figures) {
    const node_figures& n = *node.figures;
    std::printf("  node %s, canonicalize %s (%s)\n", n.node_version.c_str(), n.package_version.c_str(),
                n.entry.c_str());
    print_header();
    print_row("jcs: JSON.parse + canonicalize + sha256", n.jcs, "MB/s of input bytes");
    print_row("relay: JSON.parse + drop nulls + canonicalize + sha256", n.relay, "MB/s of input bytes");
    const std::size_t jcs_mismatches = count_mismatches(n.jcs_digests, digests[1]);
    const std::size_t relay_mismatches = count_mismatches(n.relay_digests, digests[0]);
    mismatch = jcs_mismatches != 0 || relay_mismatches != 0;
    std::printf("  digests differing from ours: jcs %s, relay %s of %s documents%s\n",
                with_commas(jcs_mismatches).c_str(), with_commas(relay_mismatches).c_str(),
                with_commas(docs.size()).c_str(), mismatch ? "  ERROR" : "");
    for (std::size_t i = 0; mismatch && i < docs.size(); ++i) {
      if (n.jcs_digests[i] != digests[1][i] || n.relay_digests[i] != digests[0][i]) {
        std::printf("  first differing document (#%zu):\n%s\n", i, docs[i].c_str());
        break;
      }
    }
  } else {
    std::printf("  node baseline skipped: %s\n", node.skipped_because.c_str());
  }

  std::puts("\ngoals:");
  if (o.small && node.figures) {
    std::puts("  (--small is a smoke run: too few packages for node's JIT to warm up, so the speedups over node are not\n"
              "  representative)");
  }
  std::printf("  relay parse + canonicalize + SHA-256 at %.1f%% of SHA-256 alone, per document (goal >= %.0f%%)  %s\n",
              100 * relay_fraction, 100 * sha256_fraction_goal, verdict(relay_fraction >= sha256_fraction_goal));
  if (node.figures) {
    const double relay_speedup = node.figures->relay.seconds / pipeline[0].seconds;
    const double jcs_speedup = node.figures->jcs.seconds / pipeline[1].seconds;
    std::printf("  relay %.1fx node (goal >= %.0fx)  %s\n", relay_speedup, node_speedup_goal,
                verdict(relay_speedup >= node_speedup_goal));
    std::printf("  jcs %.1fx node canonicalize (goal >= %.0fx)  %s\n", jcs_speedup, node_speedup_goal,
                verdict(jcs_speedup >= node_speedup_goal));
  } else {
    std::puts("  faster than node: not measured (node baseline skipped)");
  }
  return mismatch ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return agentctx_bench::bench_main<options>(argc, argv, parse_options, run); }
