// agentctx/agdb/mcp_tools.hpp: the MCP tools of an AGENTS.db server (seed
// 000 sections 10, 11 and 12), for agentctx/mcp/server.hpp.
//
//   mcp::tool_registry tools;
//   auto added = agdb::add_mcp_tools(tools, io::default_file_system(), {});
//   mcp::server server({"agentsdb", "0.1.0"}, std::move(tools));
//
//   agents_search           layered search (layer_search.hpp) over the
//                           selected layers; every result carries its layer,
//                           score, provenance and its conflicts: the copies of
//                           its id in lower selected layers whose content
//                           differs (seed 000 section 12)
//   agents_context_write    an agent write to the local or delta layer
//                           (append_chunk: author mcp, a fresh id)
//   agents_context_propose  proposes a delta chunk for the user layer
//                           (propose_promotion: a meta.proposal_event chunk
//                           appended to the delta layer)
//
// The seed's dotted names (agents.search, agents.context.write,
// agents.context.propose) are accepted as aliases by tools/call; tools/list
// shows the underscore names only (some clients allow [a-zA-Z0-9_-] only).
//
// Every call opens the layer files afresh, so it sees the writes of earlier
// calls and of other processes. Results are JSON objects (the text content,
// and the structured content under the declared output schemas); refused
// requests and failures (a write to base, a reserved kind, a missing chunk,
// a damaged layer, an embedder that does not match the layers) are isError
// results whose text is the library's one-line error.
// The file system, which the handlers use, must outlive the registry.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/json_output.hpp"
#include "agentctx/agdb/embedder_config.hpp"
#include "agentctx/agdb/layer_append.hpp"
#include "agentctx/agdb/layer_embedder.hpp"
#include "agentctx/agdb/layer_search.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/proposals.hpp"
#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/json/writer.hpp"
#include "agentctx/mcp/json_schema.hpp"
#include "agentctx/mcp/tool_registry.hpp"

namespace agentctx::agdb {

struct mcp_tool_options {
  /// The four layers (missing files are skipped by searches and created by
  /// writes). Default: the standard names in the current directory.
  std::vector<layer_location> layers = standard_layer_locations();
  /// The embedder of queries and writes; nullopt: the one the layers record
  /// (layer_embedder.hpp).
  std::optional<embedder_config> embedder;
  /// Threads per search (for layers of 2^20 values or more).
  unsigned search_threads = 1;
  /// The largest k agents_search accepts (at most search_request::max_k).
  std::size_t max_k = 1000;
};

namespace detail {

// What the handlers share: the file system, the options, and the embedder of
// the last search (a command embedder is started once, not once per query).
struct mcp_tool_state {
  io::file_system* fs = nullptr;
  mcp_tool_options options;
  std::unique_ptr<embedder> search_embedder;

  result<embedder*> embedder_for(const embedder_config& config) {
    if (search_embedder == nullptr || search_embedder->profile() != config.profile) {
      search_embedder.reset();
      auto made = make_embedder(config, *fs);
      if (!made) return unexpected(std::move(made).error());
      search_embedder = std::move(*made);
    }
    return search_embedder.get();
  }
};

inline std::vector<std::string> layer_names() {
  std::vector<std::string> out;
  for (const layer_id layer : standard_layers) out.emplace_back(layer_name(layer));
  return out;
}

inline std::vector<std::string> string_array(simdjson::dom::array values) {
  std::vector<std::string> out;
  for (const simdjson::dom::element value : values) out.emplace_back(value.get_string().value_unsafe());
  return out;
}

inline mcp::json_schema chunk_id_schema(std::string description) {
  return mcp::json_schema::integer().minimum(1).maximum(4294967295.0).description(std::move(description));
}

inline mcp::json_schema search_input_schema(std::size_t max_k) {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("query", json_schema::string().min_length(1).description("What to look for (non-empty)"))
      .property("k", json_schema::integer()
                         .minimum(1)
                         .maximum(static_cast<double>(max_k))
                         .default_json("10")
                         .description("How many results to return (default 10)"))
      .property("filters",
                json_schema::object().property(
                    "kind", json_schema::array(json_schema::string()).description(
                                "Only chunks of these kinds ('meta.*' matches every meta. kind). Default: every kind "
                                "but options, tombstone and meta.*")))
      .property("layers", json_schema::array(json_schema::string().allowed_values(layer_names()))
                              .description("The layers to search, from base, user, delta, local (default: all four)"));
}

inline mcp::json_schema search_output_schema() {
  using mcp::json_schema;
  const auto layer = [] { return json_schema::string().allowed_values(layer_names()); };
  json_schema source = json_schema::object()
                           .required_property("type", json_schema::string().allowed_values({"chunk_id", "source_string"}))
                           .required_property("value", json_schema::any_of_types({mcp::json_type::string,
                                                                                  mcp::json_type::integer}));
  json_schema conflict = json_schema::object()
                             .required_property("layer", layer())
                             .required_property("content_sha256", json_schema::string());
  json_schema hit = json_schema::object()
                        .required_property("rank", json_schema::integer())
                        .required_property("layer", layer())
                        .required_property("score", json_schema::number())
                        .required_property("id", json_schema::integer())
                        .required_property("kind", json_schema::string())
                        .required_property("content", json_schema::string())
                        .required_property("author", json_schema::string())
                        .required_property("confidence", json_schema::number())
                        .required_property("created_at_unix_ms", json_schema::integer())
                        .required_property("created_at", json_schema::string())
                        .required_property("sources", json_schema::array(std::move(source)))
                        .required_property("conflicts", json_schema::array(std::move(conflict)).description(
                                                            "Copies of this id in lower layers whose content differs"));
  const auto string_or_null = [] { return json_schema::any_of_types({mcp::json_type::string, mcp::json_type::null}); };
  json_schema profile = json_schema::any_of_types({mcp::json_type::object, mcp::json_type::null})
                            .required_property("backend", json_schema::string())
                            .required_property("model", string_or_null())
                            .required_property("revision", string_or_null())
                            .required_property("dim", json_schema::integer())
                            .required_property("output_norm", json_schema::string())
                            .description("The embedding profile the layer records; null when it records none");
  json_schema searched = json_schema::object()
                             .required_property("layer", layer())
                             .required_property("path", json_schema::string())
                             .required_property("chunks", json_schema::integer())
                             .required_property("embedding_profile", std::move(profile));
  return json_schema::object()
      .required_property("query", json_schema::string())
      .required_property("k", json_schema::integer())
      .required_property("layers", json_schema::array(std::move(searched)).description("The layers searched"))
      .required_property("warnings", json_schema::array(json_schema::string()))
      .required_property("results", json_schema::array(std::move(hit)));
}

inline mcp::json_schema write_input_schema(const write_limits& limits) {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("content", json_schema::string().min_length(1).description(
                                        "The text to record (UTF-8, at most " +
                                        std::to_string(limits.max_content_bytes) + " bytes)"))
      .required_property("kind", json_schema::string().min_length(1).description(
                                     "What the text is, e.g. derived-summary, invariant, note (not options, "
                                     "tombstone or meta.*)"))
      .required_property("confidence",
                         json_schema::number().minimum(0).maximum(1).description("How sure you are, from 0 to 1"))
      .property("sources", json_schema::array(json_schema::any_of_types({mcp::json_type::string, mcp::json_type::integer})
                                                  .min_length(1)
                                                  .minimum(1)
                                                  .maximum(4294967295.0))
                               .max_items(limits.max_sources)
                               .default_json("[]")
                               .description("Provenance: \"file:line\" strings, or chunk ids (integers or digit "
                                            "strings) of chunks in the layers"))
      .required_property("scope", json_schema::string().allowed_values({"local", "delta"}).description(
                                      "local: notes for this checkout; delta: proposed for review. base and user "
                                      "are never written by agents"));
}

inline mcp::json_schema write_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("context_id", json_schema::integer().description("The id of the new chunk"))
      .required_property("layer", json_schema::string().allowed_values({"local", "delta"}))
      .required_property("path", json_schema::string())
      .required_property("created", json_schema::boolean().description("The layer file was created by this write"))
      .required_property("chunks", json_schema::integer().description("Chunks in the layer after the write"))
      .required_property("warnings", json_schema::array(json_schema::string()));
}

inline mcp::json_schema propose_input_schema() {
  using mcp::json_schema;
  const auto text = [](std::string description) {
    return json_schema::string().max_length(4096).description(std::move(description));
  };
  return json_schema::object()
      .required_property("context_id", chunk_id_schema("The id of a chunk of the delta layer"))
      .property("target", json_schema::string().allowed_values({"user"}).default_json("\"user\"").description(
                              "Where the chunk should go: always user"))
      .property("title", text("A short title for the reviewer"))
      .property("why", text("Why the chunk deserves promotion"))
      .property("what", text("What the chunk says, in short"))
      .property("where", text("Where it applies"));
}

inline mcp::json_schema propose_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("proposal_id", json_schema::integer().description("The id of the proposal event"))
      .required_property("context_id", json_schema::integer())
      .required_property("target", json_schema::string())
      .required_property("already_pending", json_schema::boolean().description(
                                                "The chunk had a pending proposal already; nothing was written"))
      .required_property("path", json_schema::string().description("The delta layer file"));
}

inline mcp::tool_result search_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  const auto failed = [](const error& e) { return mcp::tool_result::failure(describe_for_message(e)); };
  const std::string_view query = arguments["query"].get_string().value_unsafe();
  std::size_t k = 10;
  if (simdjson::dom::element value; arguments.at_key("k").get(value) == simdjson::SUCCESS) {
    k = static_cast<std::size_t>(*mcp::integer_value(value));
  }
  std::optional<std::vector<std::string>> kinds;
  if (simdjson::dom::array value; arguments.at_pointer("/filters/kind").get(value) == simdjson::SUCCESS) {
    kinds = string_array(value);
  }
  layer_set wanted = layer_set::all();
  if (simdjson::dom::array value; arguments.at_key("layers").get(value) == simdjson::SUCCESS) {
    wanted = layer_set();
    for (const std::string& name : string_array(value)) wanted.add(*parse_layer_name(name));
  }

  auto stack = layer_stack::open(*state.fs, state.options.layers);
  if (!stack) return failed(stack.error());
  const layer_set selected = stack->present(wanted);
  std::vector<std::string> warnings;
  std::vector<search_hit> hits;
  // An explicit empty kind list matches no chunk (kind_filter reads an empty
  // list as "the default kinds").
  const bool can_match = !kinds || !kinds->empty();
  if (selected.empty() && !wanted.empty()) {
    std::string looked;
    for (const layer_location& location : state.options.layers) {
      if (wanted.contains(location.id)) looked += (looked.empty() ? "" : ", ") + location.path;
    }
    warnings.push_back("none of the selected layers exists (" + looked + ")");
  } else if (!selected.empty() && can_match) {
    auto choice = embedder_config_for_layers(*stack, selected, state.options.embedder);
    if (!choice) return failed(choice.error());
    warnings = std::move(choice->warnings);
    auto chosen = state.embedder_for(choice->config);
    if (!chosen) return failed(chosen.error());
    std::vector<float> vector(choice->config.profile.dim);
    if (auto embedded = (*chosen)->embed(std::span(&query, 1), vector); !embedded) {
      state.search_embedder.reset();  // a command embedder that failed is started afresh next time
      return failed(embedded.error());
    }
    search_request request;
    request.query_vector = vector;
    request.query_text = query;
    request.k = k;
    if (kinds) request.kinds = kind_filter(std::move(*kinds));
    request.layers = wanted;
    request.threads = state.options.search_threads;
    layer_searcher searcher(*stack);
    auto found = searcher.search(request);
    if (!found) return failed(found.error());
    hits = std::move(*found);
  }

  std::string out;
  json::writer w(out);
  w.begin_object();
  w.key("query").value(query);
  w.key("k").value(static_cast<std::uint64_t>(k));
  w.key("layers");
  write_searched_layers(w, *stack, selected);
  w.key("warnings").begin_array();
  for (const std::string& warning : warnings) w.value(warning);
  w.end_array();
  w.key("results").begin_array();
  std::uint64_t rank = 0;
  for (const search_hit& hit : hits) {
    w.begin_object();
    w.key("rank").value(++rank);
    w.key("layer").value(layer_name(hit.layer));
    w.key("score").value(hit.score);
    write_chunk_members(w, hit.chunk, hit.sources);
    w.key("conflicts");
    write_conflicts(w, hit.conflicts);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return mcp::tool_result::object(std::move(out));
}

inline mcp::tool_result write_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  chunk_write w;
  w.scope = *parse_layer_name(arguments["scope"].get_string().value_unsafe());
  w.content = std::string(arguments["content"].get_string().value_unsafe());
  w.kind = std::string(arguments["kind"].get_string().value_unsafe());
  w.confidence = static_cast<float>(arguments["confidence"].get_double().value_unsafe());
  if (simdjson::dom::array sources; arguments.at_key("sources").get(sources) == simdjson::SUCCESS) {
    for (const simdjson::dom::element source : sources) {
      if (const auto id = mcp::integer_value(source)) {
        w.sources.push_back(source_ref::to_chunk(static_cast<std::uint32_t>(*id)));
      } else {
        w.sources.push_back(source_ref::parse(source.get_string().value_unsafe()));
      }
    }
  }
  auto written = append_chunk(*state.fs, state.options.layers, w, state.options.embedder);
  if (!written) return mcp::tool_result::failure(describe_for_message(written.error()));

  std::string out;
  json::writer j(out);
  j.begin_object();
  j.key("context_id").value(written->id);
  write_outcome_members(j, *written, w.scope);
  j.end_object();
  return mcp::tool_result::object(std::move(out));
}

inline mcp::tool_result propose_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  proposal_request request;
  request.context_id = static_cast<std::uint32_t>(*mcp::integer_value(arguments["context_id"].value_unsafe()));
  if (std::string_view target; arguments.at_key("target").get_string().get(target) == simdjson::SUCCESS) {
    request.target = std::string(target);
  }
  const auto text = [&](std::string_view key, std::optional<std::string>& out) {
    if (std::string_view value; arguments.at_key(key).get_string().get(value) == simdjson::SUCCESS) {
      out = std::string(value);
    }
  };
  text("title", request.title);
  text("why", request.why);
  text("what", request.what);
  text("where", request.where);
  auto proposed = propose_promotion(*state.fs, state.options.layers, request);
  if (!proposed) return mcp::tool_result::failure(describe_for_message(proposed.error()));

  std::string out;
  json::writer j(out);
  j.begin_object();
  j.key("proposal_id").value(proposed->proposal_id);
  j.key("context_id").value(proposed->context_id);
  j.key("target").value(request.target);
  j.key("already_pending").value(proposed->already_pending);
  j.key("path").value(proposed->path);
  j.end_object();
  return mcp::tool_result::object(std::move(out));
}

}  // namespace detail

/// Adds agents_search, agents_context_write and agents_context_propose (with
/// their dotted aliases) to `registry`. `fs` must outlive the registry.
/// Errors: invalid_argument when a tool name is taken, or options.max_k is 0
/// or above search_request::max_k.
inline result<void> add_mcp_tools(mcp::tool_registry& registry, io::file_system& fs, mcp_tool_options options) {
  if (options.max_k == 0 || options.max_k > search_request::max_k) {
    return fail(errc::invalid_argument, "max_k must be from 1 to " + std::to_string(search_request::max_k));
  }
  auto state = std::make_shared<detail::mcp_tool_state>();
  state->fs = &fs;
  state->options = std::move(options);

  using handler_function = mcp::tool_result (*)(detail::mcp_tool_state&, simdjson::dom::object);
  const auto add = [&](std::string name, std::string alias, std::string title, std::string description,
                       mcp::json_schema input, mcp::json_schema output, handler_function run) {
    mcp::tool_definition tool;
    tool.name = std::move(name);
    tool.aliases = {std::move(alias)};
    tool.title = std::move(title);
    tool.description = std::move(description);
    tool.input_schema = std::move(input);
    tool.output_schema = std::move(output);
    tool.handler = [state, run](simdjson::dom::object arguments) { return run(*state, arguments); };
    return registry.add(std::move(tool));
  };
  AGENTCTX_TRY(add("agents_search", "agents.search", "Search the context layers",
                   "Searches the AGENTS.db context layers (local > user > delta > base: a chunk in a higher layer "
                   "overrides the same id below). Each result gives its layer, score, content, kind, author, "
                   "confidence and sources; conflicts lists lower-layer copies of the same id whose content differs.",
                   detail::search_input_schema(state->options.max_k), detail::search_output_schema(),
                   detail::search_tool));
  AGENTCTX_TRY(add("agents_context_write", "agents.context.write", "Record context",
                   "Appends a chunk of context you derived to the local layer (notes for this checkout) or the delta "
                   "layer (proposed for human review). The author is recorded as mcp. Returns the new chunk's "
                   "context_id.",
                   detail::write_input_schema(write_limits{}), detail::write_output_schema(), detail::write_tool));
  AGENTCTX_TRY(add("agents_context_propose", "agents.context.propose", "Propose context for review",
                   "Proposes a chunk of the delta layer for promotion to the user layer. A human or CI accepts or "
                   "rejects it later; the proposal is recorded in the delta layer. Proposing a chunk twice returns "
                   "the pending proposal.",
                   detail::propose_input_schema(), detail::propose_output_schema(), detail::propose_tool));
  return {};
}

}  // namespace agentctx::agdb
