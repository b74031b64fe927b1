// Output formatting shared by the agentsdb subcommands.
#pragma once

#include <simdjson.h>

#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/json_output.hpp"
#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_summary.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/json/writer.hpp"
#include "common/command_support.hpp"

namespace agentsdb {

using agentctx_cli::count_of;
using agentctx_cli::shown;

/// "docs/a.md:12" for a string source, as the layer has it (for JSON),
/// "chunk 7" for a chunk-id source.
inline std::string source_text(const agentctx::agdb::source_ref& s) {
  if (s.kind == agentctx::agdb::relationship_kind::source_chunk_id) return "chunk " + std::to_string(s.chunk_id);
  return s.text;
}

/// source_text() for text output: a string source shown() (it is read from
/// the layer).
inline std::string describe_source(const agentctx::agdb::source_ref& s) {
  return s.kind == agentctx::agdb::relationship_kind::source_chunk_id ? source_text(s) : shown(s.text);
}

/// `text` cut to at most `width` bytes for a table's column, at a character
/// boundary, its last three bytes "..." when cut (when `width` has room for
/// them).
inline std::string fit_column(std::string text, std::size_t width) {
  if (text.size() <= width) return text;
  const std::string_view dots = width >= 3 ? "..." : "";
  std::size_t cut = width - dots.size();
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text.append(dots);
}

/// The first `max_chars` bytes of `text` on one line (newlines and tabs shown
/// as spaces), cut at a UTF-8 boundary, with "..." when cut; other control
/// characters are escaped (agentctx::printable_line).
inline std::string preview(std::string_view text, std::size_t max_chars) {
  std::string out;
  out.reserve(std::min(text.size(), max_chars) + 3);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= max_chars) {
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
      if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
      out += "...";
      return agentctx::printable_line(out);
    }
    const char c = text[i];
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  }
  return agentctx::printable_line(out);
}

/// Prints each warning as "agentsdb: warning: TEXT" on stderr, made
/// printable (a warning may quote a file's name or a layer's text).
inline void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) {
    std::cerr << "agentsdb: warning: " << agentctx::printable_line(warning) << '\n';
  }
}

/// "canonical 9, options 2".
inline std::string join_counts(const std::vector<agentctx::agdb::name_count>& counts) {
  if (counts.empty()) return "(none)";
  std::string out;
  for (const auto& c : counts) {
    if (!out.empty()) out += ", ";
    out += shown(c.name) + " " + std::to_string(c.count);
  }
  return out;
}

/// Splices `text` as JSON when it parses, else writes it as a JSON string.
inline void write_json_or_string(agentctx::json::writer& w, std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size()).get(root) == simdjson::SUCCESS) {
    w.raw(simdjson::minify(root));
  } else {
    w.value(text);
  }
}

/// A chunk as a JSON object, field names as in the reference's export format
/// (agentctx/agdb/json_output.hpp), plus its embedding row and norm.
/// `extra` may add members before the object is closed.
inline void write_chunk_json(agentctx::json::writer& w, const agentctx::agdb::chunk_view& c,
                             const std::vector<agentctx::agdb::source_ref>& sources,
                             std::optional<double> embedding_norm, const std::function<void()>& extra = {}) {
  w.begin_object();
  agentctx::agdb::write_chunk_members(w, c, sources);
  w.key("embedding_row").value(c.embedding_row);
  if (embedding_norm) w.key("embedding_norm").value(*embedding_norm);
  if (extra) extra();
  w.end_object();
}

}  // namespace agentsdb
