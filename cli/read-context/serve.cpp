// read-context serve: the context loader's tools (read_context,
// read_full_notes, propose, list_proposals, confirm, decline) over MCP on
// stdio, for one root:
//   read-context serve --root /home/me/photos
// Newline-delimited JSON-RPC 2.0 on stdin and stdout (docs/mcp.md); the
// tools are context/mcp_tools.hpp (docs/context/read-context.md). Standard
// output carries protocol messages only; diagnostics go to stderr. End of
// input ends the server with exit code 0.
#include <cmath>

#include "agentctx/context/mcp_tools.hpp"
#include "agentctx/mcp/server.hpp"
#include "common/mcp_serve.hpp"
#include "read-context/command.hpp"

namespace context_cli {
namespace {

namespace mcp = agentctx::mcp;

struct serve_options : common_options {
  std::size_t max_line_bytes = mcp::server_limits{}.max_line_bytes;
};

int run_serve(const serve_options& o) {
  return with_root(o, [&](io::file_system& fs) -> int {
    context::loader_options options = o.loader;
    options.recent_window_ms = static_cast<std::uint64_t>(std::llround(o.recent_hours * 3'600'000.0));
    mcp::tool_registry tools;
    if (auto added = context::add_mcp_tools(tools, fs, options); !added) return report(o, added.error());
    agentctx_cli::log_serve_line(program_name,
                                 "root " + agentctx_cli::shown(static_cast<io::confined_file_system&>(fs).root()));
    auto served = agentctx_cli::serve_mcp_stdio(
        program_name, "Context loader",
        "At the start of a session on an item call read_context(item_id) once and read the bundle in its order: "
        "taste (global preferences), brief (this item's intent), notes (working observations), recent_log (what "
        "happened lately), vocabulary_gaps. Long notes are elided in the middle: read_full_notes has the rest. To "
        "change taste or notes, call propose; a human confirms or declines.",
        std::move(tools), o.max_line_bytes);
    return served ? exit_ok : report(o, served.error());
  });
}

}  // namespace

void register_serve(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "serve", "Serve the context tools over MCP (JSON-RPC on stdin/stdout)",
                                 run_serve);
  add_common_options(*sub, *opts, false);
  sub->footer("Exit codes: 0 end of input; 1 the root does not exist; 2 usage error or an I/O error on the standard "
              "streams.");
  sub->add_option("--max-line-bytes", opts->max_line_bytes,
                  "The longest message (one line) accepted; longer ones are answered with an error")
      ->capture_default_str()
      ->check(positive_count);
}

}  // namespace context_cli
