// Serving an MCP tool registry over stdio, as `agentsdb serve` and `relay
// serve` do: diagnostics go to stderr as "<tool> serve: <line>", protocol
// messages alone to stdout, and end of input ends the server.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>

#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/version.hpp"
#include "agentctx/mcp/server.hpp"
#include "agentctx/mcp/stdio_transport.hpp"

namespace agentctx_cli {

/// Writes "<program> serve: <line>" to stderr, the line made printable: it
/// quotes what the client sent (a method's or a tool's name, the client's
/// name), which may hold control characters.
inline void log_serve_line(std::string_view program, std::string_view line) {
  std::cerr << program << " serve: " << agentctx::printable_line(line) << '\n';
}

/// Serves `tools` over standard input and output until end of input, as the
/// server `name` (version: the library's) with the given title and
/// instructions, refusing messages longer than `max_line_bytes`. Errors:
/// those of mcp::serve_stdio (I/O on the standard streams).
inline agentctx::result<void> serve_mcp_stdio(std::string_view name, std::string title, std::string instructions,
                                              agentctx::mcp::tool_registry tools, std::size_t max_line_bytes) {
  namespace mcp = agentctx::mcp;
  mcp::server_info info;
  info.name = std::string(name);
  info.version = std::string(agentctx::version);
  info.title = std::move(title);
  info.instructions = std::move(instructions);
  mcp::server_limits limits;
  limits.max_line_bytes = max_line_bytes;
  mcp::server server(std::move(info), std::move(tools), limits);
  const std::string program(name);
  server.set_log([program](std::string_view line) { log_serve_line(program, line); });
  log_serve_line(program,
                 "serving MCP over stdio (protocol " + std::string(mcp::latest_protocol_version) + " and earlier)");
  return mcp::serve_stdio(server, STDIN_FILENO, STDOUT_FILENO);
}

}  // namespace agentctx_cli
