// agentctx/agdb/json_output.hpp: the JSON views of chunks, searches and
// agent writes that `agentsdb ... --json` and the MCP tools (mcp_tools.hpp)
// share, so that every JSON view of the same thing reads the same.
//
// A chunk uses the field names of the reference implementation's export
// format:
//
//   "id": 7, "kind": "canonical", "content": "...", "author": "human",
//   "confidence": 1, "created_at_unix_ms": 1700000000000,
//   "created_at": "2023-11-14T22:13:20.000Z",
//   "sources": [{"type": "source_string", "value": "docs/a.md:12"},
//               {"type": "chunk_id", "value": 3}]
//
// The functions write members into an object the caller opens and closes
// (write_*_members), or one value where the writer expects a value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/format.hpp"
#include "agentctx/agdb/layer_append.hpp"
#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::agdb {

/// The chunk's members (see the file comment).
inline void write_chunk_members(json::writer& w, const chunk_view& c, const std::vector<source_ref>& sources) {
  w.key("id").value(c.id);
  w.key("kind").value(c.kind);
  w.key("content").value(c.content);
  w.key("author").value(c.author);
  w.key("confidence").value(c.confidence);
  w.key("created_at_unix_ms").value(c.created_at_unix_ms);
  w.key("created_at").value(format_rfc3339_utc_ms(c.created_at_unix_ms));
  w.key("sources").begin_array();
  for (const source_ref& s : sources) {
    w.begin_object();
    if (s.kind == relationship_kind::source_chunk_id) {
      w.key("type").value("chunk_id").key("value").value(s.chunk_id);
    } else {
      w.key("type").value("source_string").key("value").value(s.text);
    }
    w.end_object();
  }
  w.end_array();
}

/// The layers of `stack` in `selected`, highest precedence first, as an
/// array of {"layer", "path", "chunks", "embedding_profile" (null when the
/// layer records none)}.
inline void write_searched_layers(json::writer& w, const layer_stack& stack, layer_set selected) {
  w.begin_array();
  for (const stacked_layer& layer : stack.layers()) {
    if (!selected.contains(layer.id)) continue;
    w.begin_object();
    w.key("layer").value(layer_name(layer.id));
    w.key("path").value(layer.reader.path());
    w.key("chunks").value(static_cast<std::uint64_t>(layer.reader.chunk_count()));
    w.key("embedding_profile");
    if (layer.profile) {
      write_embedding_profile(w, *layer.profile);
    } else {
      w.value(nullptr);
    }
    w.end_object();
  }
  w.end_array();
}

/// A search hit's conflicts (seed 000 section 12) as an array of
/// {"layer", "content_sha256"}.
inline void write_conflicts(json::writer& w, const std::vector<overridden_copy>& conflicts) {
  w.begin_array();
  for (const overridden_copy& copy : conflicts) {
    w.begin_object();
    w.key("layer").value(layer_name(copy.layer));
    w.key("content_sha256").value(copy.content_sha256);
    w.end_object();
  }
  w.end_array();
}

/// An agent write's members but its id (callers name the id key):
/// "layer", "path", "created", "chunks", "warnings".
inline void write_outcome_members(json::writer& w, const write_outcome& outcome, layer_id scope) {
  w.key("layer").value(layer_name(scope));
  w.key("path").value(outcome.path);
  w.key("created").value(outcome.created);
  w.key("chunks").value(static_cast<std::uint64_t>(outcome.chunk_count));
  w.key("warnings").begin_array();
  for (const std::string& warning : outcome.warnings) w.value(warning);
  w.end_array();
}

}  // namespace agentctx::agdb
