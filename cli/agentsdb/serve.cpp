// agentsdb serve: the MCP server of seed 000 (sections 10, 11 and 15.2) over
// stdio, e.g.
//   agentsdb serve --base AGENTS.db --user AGENTS.user.db --delta AGENTS.delta.db --local AGENTS.local.db
// Newline-delimited JSON-RPC 2.0 on stdin and stdout (docs/mcp.md); the
// tools are agdb/mcp_tools.hpp, the protocol agentctx/mcp. Standard output
// carries protocol messages only; diagnostics go to stderr. End of input
// ends the server with exit code 0.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "agentctx/agdb/mcp_tools.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/mcp/server.hpp"
#include "agentsdb/command.hpp"
#include "agentsdb/layer_files.hpp"
#include "agentsdb/output.hpp"
#include "common/embedder_options.hpp"
#include "common/mcp_serve.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;
namespace mcp = agentctx::mcp;

struct serve_cli_options {
  layer_files files;
  agentctx_cli::embedder_options embedder;
  std::size_t max_line_bytes = mcp::server_limits{}.max_line_bytes;
  unsigned threads = 0;  // 0: the machine's cores
};

void log_line(std::string_view line) { agentctx_cli::log_serve_line("agentsdb", line); }

int run_serve(const serve_cli_options& o) {
  auto configured = to_embedder_config(o.embedder);
  if (!configured) return usage_error(configured.error().message);
  agdb::mcp_tool_options tool_options;
  tool_options.layers = o.files.all_four();
  tool_options.embedder = std::move(*configured);
  tool_options.search_threads = o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());

  // The layers are opened once now so that a damaged or incompatible layer
  // is reported at start rather than by the first call.
  auto& fs = agentctx::io::default_file_system();
  auto stack = agdb::layer_stack::open(fs, tool_options.layers);
  if (!stack) return report_error(stack.error());
  for (const agdb::layer_location& location : tool_options.layers) {
    const auto index = stack->index_of(location.id);
    const std::size_t chunks = index ? stack->layers()[*index].reader.chunk_count() : 0;
    log_line(std::string(agdb::layer_name(location.id)) + " layer: " + agentctx_cli::shown(location.path) +
             (index ? " (" + count_of(chunks, "chunk") + ")" : " (absent)"));
  }

  mcp::tool_registry tools;
  if (auto added = agdb::add_mcp_tools(tools, fs, std::move(tool_options)); !added) return report_error(added.error());
  auto served = agentctx_cli::serve_mcp_stdio(
      "agentsdb", "AGENTS.db context layers",
      "Context about this repository lives in layered AGENTS.db files. Use agents_search before answering "
      "questions about the repository; record what you derive with agents_context_write (scope local for notes, "
      "delta for findings worth reviewing) and propose delta chunks for the user layer with "
      "agents_context_propose.",
      std::move(tools), o.max_line_bytes);
  if (!served) return report_error(served.error());
  return exit_ok;
}

}  // namespace

void register_serve(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<serve_cli_options>();
  CLI::App* sub = app.add_subcommand("serve", "Serve the layers to agents over MCP (JSON-RPC on stdin/stdout)");
  opts->files.add_options(*sub);
  add_embedder_options(*sub, opts->embedder);
  sub->add_option("--max-line-bytes", opts->max_line_bytes,
                  "The longest message (one line) accepted; longer ones are answered with an error")
      ->capture_default_str()
      ->check(positive_count);
  sub->add_option("--threads", opts->threads, "Threads per search for large layers, 1 to 1024 (default: all cores)")
      ->check(agentctx_cli::positive_count_at_most(agentctx_cli::max_threads));
  table.add(sub, [opts] { return run_serve(*opts); });
}

}  // namespace agentsdb
