// agentctx/mcp/protocol_version.hpp: the MCP protocol revisions this core
// speaks, version negotiation, and what differs between them.
//
// Negotiation (MCP lifecycle, "Version Negotiation"): the client's
// initialize request names the version it wants; the server answers with the
// same version when it supports it, else with the latest one it supports
// (the client then decides whether to go on).
//
// Differences that matter to a tools-only server:
//   - 2025-03-26 is the only revision with JSON-RPC batches (arrays of
//     messages); 2025-06-18 removed them again;
//   - 2025-06-18 added a tool's "title" and "outputSchema" and a call
//     result's "structuredContent".
#pragma once

#include <array>
#include <string_view>

namespace agentctx::mcp {

/// The supported revisions, newest first.
inline constexpr std::array<std::string_view, 4> supported_protocol_versions = {"2025-11-25", "2025-06-18",
                                                                               "2025-03-26", "2024-11-05"};
inline constexpr std::string_view latest_protocol_version = supported_protocol_versions.front();

/// The version to answer an initialize request asking for `requested`.
constexpr std::string_view negotiate_protocol_version(std::string_view requested) noexcept {
  for (const std::string_view version : supported_protocol_versions) {
    if (version == requested) return version;
  }
  return latest_protocol_version;
}

/// True when `version` (a supported revision) carries JSON-RPC batches.
constexpr bool allows_batches(std::string_view version) noexcept { return version == "2025-03-26"; }

/// True when `version` knows tool titles, output schemas and structured
/// content. Revisions are dates, so they compare as strings.
constexpr bool has_structured_tool_output(std::string_view version) noexcept { return version >= "2025-06-18"; }

}  // namespace agentctx::mcp
