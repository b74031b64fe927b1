// agent-memory serve: the seed 004 tools (start_session, append_entry,
// read_summary, update_summary, list_sessions) over MCP on stdio, e.g.
//   agent-memory serve --allow-root /home/me/project
// Newline-delimited JSON-RPC 2.0 on stdin and stdout (docs/mcp.md); the
// tools are memory/mcp_tools.hpp (docs/memory/agent-memory.md). Each call
// names its repo_root; --allow-root (repeatable) limits which. Standard
// output carries protocol messages only; diagnostics go to stderr. End of
// input ends the server with exit code 0.
#include <cstddef>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "agent-memory/command.hpp"
#include "agentctx/memory/mcp_tools.hpp"
#include "common/mcp_serve.hpp"

namespace memory_cli {
namespace {

namespace mcp = agentctx::mcp;

struct serve_options {
  std::vector<std::string> allowed_roots;
  std::size_t max_content_bytes = memory::memory_options{}.max_content_bytes;
  std::size_t max_line_bytes = mcp::server_limits{}.max_line_bytes;
};

int run_serve(const serve_options& o) {
  for (const std::string& root : o.allowed_roots) {
    if (auto opened = memory::open_repository(root); !opened) {
      return agentctx_cli::usage_error(program_name, "--allow-root: " + opened.error().message);
    }
  }
  memory::mcp_tool_options options;
  options.allowed_roots = o.allowed_roots;
  options.memory.max_content_bytes = o.max_content_bytes;
  mcp::tool_registry tools;
  if (auto added = memory::add_mcp_tools(tools, options); !added) {
    return agentctx_cli::report_error(program_name, added.error());
  }
  agentctx_cli::log_serve_line(program_name, o.allowed_roots.empty()
                                                 ? "any repository may be named as repo_root"
                                                 : "repositories allowed: " + std::to_string(o.allowed_roots.size()));
  auto served = agentctx_cli::serve_mcp_stdio(
      program_name, "Agent memory (repository-local)",
      "Agent memory keeps your notes across sessions in the repository, under .github/agent-memory/<agent_name>/. "
      "At the start of a session call read_summary (the curated summary) and start_session (today's log). Record "
      "outcomes as they happen with append_entry into the schema's sections (Context, Discussion Summary, "
      "Decisions, Open Questions, Next Actions). Change the summary only when asked, with update_summary, passing "
      "the hash read_summary returned as base_hash. Errors are {\"error\": Code, \"message\"}.",
      std::move(tools), o.max_line_bytes);
  return served ? exit_ok : agentctx_cli::report_error(program_name, served.error());
}

}  // namespace

void register_serve(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "serve",
                                 "Serve the agent-memory tools over MCP (JSON-RPC on stdin/stdout)", run_serve);
  sub->footer("Exit codes: 0 end of input; 2 usage error or an I/O error on the standard streams.");
  sub->add_option("--allow-root", opts->allowed_roots,
                  "A repository the tools may use (repeatable; default: any absolute, canonical path)");
  sub->add_option("--max-content-bytes", opts->max_content_bytes, "The largest content accepted (larger is refused)")
      ->capture_default_str()
      ->check(positive_count);
  sub->add_option("--max-line-bytes", opts->max_line_bytes,
                  "The longest message (one line) accepted; longer ones are answered with an error")
      ->capture_default_str()
      ->check(positive_count);
}

}  // namespace memory_cli
