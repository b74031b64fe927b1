// bench/synthetic_layer.hpp: the synthetic AGDB layer the layer benchmarks
// measure (agdb_layer_bench, agdb_write_bench): markdown-like contents of 150
// to 650 bytes with some non-ASCII text, six kinds, both authors, zero to three
// sources per chunk (some chunk ids, mostly file:line strings that repeat as
// real citations do), L2-normalised f32 rows and a layer metadata blob. The
// same arguments give the same contents on every machine.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/layer_contents.hpp"

#include "bench_support.hpp"

namespace agentctx_bench {

namespace agdb = agentctx::agdb;

inline constexpr std::string_view common_words[] = {
    "the",      "layer",     "chunk",     "agent",      "context",   "file",      "index",    "query",
    "build",    "test",      "error",     "value",      "returns",   "when",      "with",     "from",
    "into",     "every",     "section",   "string",     "offset",    "length",    "header",   "record",
    "embedding", "vector",   "model",     "profile",    "source",    "reader",    "writer",   "mapping",
    "checks",   "before",    "after",     "must",       "should",    "never",     "always",   "once",
    "memory",   "disk",      "sync",      "rename",     "directory", "temporary", "atomic",   "crash",
    "recovery", "version",   "format",    "field",      "table",     "row",       "column",   "matrix",
    "dimension", "search",   "score",     "rank",       "result",    "cache",     "key",      "hash",
    "commit",   "review",    "decision",  "because",    "instead",   "keeps",     "stays",    "valid",
    "while",    "lives",     "owner",     "borrowed",   "bytes",     "little",    "endian",   "aligned",
    "request",  "response",  "server",    "client",     "tool",      "call",      "turn",     "session",
    "user",     "assistant", "prompt",    "summary",    "relay",     "message",   "queue",    "retry",
    "timeout",  "limit",     "budget",    "token",      "window",    "delta",     "base",     "merge",
    "conflict", "resolved",  "pending",   "accepted",   "rejected",  "proposal",  "note",     "canonical",
    "a",        "an",        "is",        "are",        "of",        "to",        "in",       "on",
    "and",      "or",        "not",       "it",         "this",      "that",      "for",      "by",
};
// Non-ASCII words keep the UTF-8 checks off their all-ASCII fast path now and then.
inline constexpr std::string_view rare_words[] = {"caf\xc3\xa9",     "na\xc3\xafve", "\xe2\x86\x92",
                                                  "\xe2\x80\x94",    "Z\xc3\xbcrich", "\xc2\xb5s",
                                                  "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "\xe2\x9c\x93"};
inline constexpr std::string_view chunk_kinds[] = {"canonical", "note", "decision", "task", "log", "reference"};
inline constexpr std::string_view source_areas[] = {"docs", "src", "tests", "design", "notes", "cli", "include", "ops"};

inline void append_word(std::string& out, random_source& random, bool capitalised) {
  const std::size_t at = out.size();
  if (random.below(60) == 0) {
    out += rare_words[random.below(std::size(rare_words))];
  } else if (random.below(40) == 0) {
    out += '`';
    out += common_words[random.below(std::size(common_words))];
    out += "_";
    out += common_words[random.below(std::size(common_words))];
    out += "()`";
  } else {
    out += common_words[random.below(std::size(common_words))];
  }
  if (capitalised && out[at] >= 'a' && out[at] <= 'z') out[at] = static_cast<char>(out[at] - 'a' + 'A');
}

/// A markdown-like paragraph of 150 to 650 bytes under a short heading.
inline std::string make_content(random_source& random) {
  std::string out = "## ";
  const std::size_t heading_words = 2 + random.below(4);
  for (std::size_t w = 0; w < heading_words; ++w) {
    if (w != 0) out += ' ';
    append_word(out, random, true);
  }
  out += "\n\n";
  const std::size_t target = 150 + random.below(500);
  while (out.size() < target) {
    const std::size_t words = 6 + random.below(13);
    for (std::size_t w = 0; w < words; ++w) {
      if (w != 0) out += ' ';
      append_word(out, random, w == 0);
    }
    out += random.below(8) == 0 ? ".\n\n" : ". ";
  }
  return out;
}

inline agdb::source_ref make_source(random_source& random, std::uint32_t chunk_id) {
  if (chunk_id > 1 && random.below(5) < 2) {
    return agdb::source_ref::to_chunk(1 + static_cast<std::uint32_t>(random.below(chunk_id - 1)));
  }
  // 8 areas x 40 topics x 300 lines: many chunks cite the same place, as real ones do.
  // One draw per statement: the operands of + are evaluated in no set order.
  std::string text(source_areas[random.below(std::size(source_areas))]);
  text += "/topic_" + std::to_string(random.below(40));
  text += ".md:" + std::to_string(1 + random.below(300));
  return agdb::source_ref::to_string(std::move(text));
}

/// A layer of `chunk_count` chunks (ids 1 to chunk_count) with `dim`-value
/// f32 rows; its metadata records a hash profile with L2 normalisation and
/// `generator` as the tool that wrote it.
inline agdb::layer_contents make_layer(std::size_t chunk_count, std::uint32_t dim, std::string_view generator) {
  random_source random(0x5EEDull + chunk_count * 31 + dim);
  agdb::layer_contents layer;
  layer.chunks.reserve(chunk_count);
  for (std::size_t i = 0; i < chunk_count; ++i) {
    agdb::chunk c;
    c.id = static_cast<std::uint32_t>(i + 1);
    c.kind = std::string(chunk_kinds[random.below(std::size(chunk_kinds))]);
    c.content = make_content(random);
    c.author = random.below(10) < 7 ? "human" : "mcp";
    c.confidence = 0.5f + static_cast<float>(random.below(51)) / 100.0f;
    c.created_at_unix_ms = 1'765'000'000'000ull + i * 997 + random.below(997);
    const std::size_t sources = random.below(4);
    for (std::size_t s = 0; s < sources; ++s) c.sources.push_back(make_source(random, c.id));
    layer.chunks.push_back(std::move(c));
  }
  agdb::embedding_matrix& m = layer.embeddings;
  m.type = agdb::element_type::f32;
  m.dim = dim;
  m.quant_scale = 1.0f;
  m.f32_values.resize(chunk_count * dim);
  for (std::size_t row = 0; row < chunk_count; ++row) {
    const std::span<float> values = std::span(m.f32_values).subspan(row * dim, dim);
    double norm = 0.0;
    for (float& v : values) {
      v = random.signed_unit();
      v += random.signed_unit();
      norm += double{v} * v;
    }
    const float inverse = norm > 0.0 ? static_cast<float>(1.0 / std::sqrt(norm)) : 1.0f;
    for (float& v : values) v *= inverse;
  }
  const agdb::embedding_profile profile{"hash", std::nullopt, std::nullopt, dim, "l2"};
  layer.metadata_json = agdb::layer_metadata_json(profile, generator, "0.1.0");
  return layer;
}

}  // namespace agentctx_bench
