// relay serve: the Agentic Protocol's operations as MCP tools (seed 001
// section 13) over stdio, e.g.
//   relay serve --store .relay
// Newline-delimited JSON-RPC 2.0 on stdin and stdout (docs/mcp.md); the
// tools are relay/mcp_tools.hpp (docs/relay/mcp.md), the protocol
// agentctx/mcp. The server is the store's writer for as long as it runs
// (the read-only relay commands still work beside it). Standard output
// carries protocol messages only; diagnostics go to stderr. End of input
// ends the server with exit code 0.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "agentctx/mcp/server.hpp"
#include "agentctx/relay/mcp_tools.hpp"
#include "common/embedder_options.hpp"
#include "common/mcp_serve.hpp"
#include "relay/command.hpp"
#include "relay/search_embedder.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

namespace agdb = agentctx::agdb;
namespace mcp = agentctx::mcp;

struct serve_cli_options : writer_options {
  agentctx_cli::embedder_options embedder;
  std::size_t max_line_bytes = mcp::server_limits{}.max_line_bytes;
};

void log_line(std::string_view line) { agentctx_cli::log_serve_line("relay", line); }

int serve(const serve_cli_options& o, relay::store& s, agdb::embedder& embedder) {
  mcp::tool_registry tools;
  if (auto added = relay::add_mcp_tools(tools, s, embedder); !added) return report_error(o, added.error());
  log_line("store " + agentctx_cli::shown(s.directory()) + ": " + count_of(s.projects().size(), "project") + ", " +
           count_of(s.record_count(), "record") + "; embedder " + agentctx_cli::shown(embedder.profile().backend) +
           " (dim " + std::to_string(embedder.profile().dim) + ")");
  auto served = agentctx_cli::serve_mcp_stdio(
      "relay", "Relay context store (Agentic Protocol)",
      "Relay keeps the shared context of a project across sessions and agents: immutable Context Packages (what was "
      "done, decided and left open) and facts (the current state). At the start of work call relay_orient for the "
      "project (relay_orchestrate for a digest across projects); find earlier work with relay_pull mode relevant. "
      "When you finish a meaningful piece of work, record it with relay_deposit (decisions_made, open_questions, "
      "handoff_note). Keep state current with relay_assert_fact and relay_invalidate_fact. Ask for a review with "
      "relay_flag_for_review. Errors name the protocol code and HTTP status.",
      std::move(tools), o.max_line_bytes);
  return served ? exit_ok : report_error(o, served.error());
}

int run_serve(const serve_cli_options& o) {
  return with_writer(o, [&](relay::store& s) {
    return with_search_embedder(o, o.embedder, [&](agdb::embedder& embedder) { return serve(o, s, embedder); });
  });
}

}  // namespace

void register_serve(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "serve",
                                 "Serve the store to agents over MCP (JSON-RPC on stdin/stdout) as its writer",
                                 run_serve);
  sub->footer(std::string(exit_codes_help));
  opts->use = store_use::created;
  sub->add_option("--store", opts->store, "The store's folder (created when missing)")->capture_default_str();
  inherit_global_options(*sub, opts->store, nullptr);
  sub->add_flag("--wait", opts->wait, "Wait for another writer to finish instead of failing when the store is locked");
  agentctx_cli::add_embedder_options(*sub, opts->embedder);
  sub->add_option("--max-line-bytes", opts->max_line_bytes,
                  "The longest message (one line) accepted; longer ones are answered with an error")
      ->capture_default_str()
      ->check(positive_count);
}

}  // namespace relay_cli
