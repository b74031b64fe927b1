// The embedder options shared by the subcommands that embed text (agentsdb
// compile, search, write, import and serve; relay pull --mode relevant and
// orchestrate): which embedder, its declared profile, and a cache.
//
//   --embedder hash|command   --embed-command CMD   --embed-backend NAME
//   --embed-model M   --embed-revision R   --embed-norm none|l2   --dim N
//   --embedding-cache DIR
//
// add_embedder_options() registers them on a subcommand; to_embedder_config()
// turns what the user gave into a library embedder_config (nullopt when the
// user configured no embedder at all, so the caller picks its default).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agentctx/agdb/embedder_config.hpp"
#include "agentctx/core/result.hpp"

namespace agentctx_cli {

struct embedder_options {
  std::string embedder;  ///< "" = not given, "hash", "command"
  std::string command;   ///< --embed-command, run as {"/bin/sh", "-c", command}
  std::string backend = "command";
  std::string model;
  std::string revision;
  std::string norm = "none";
  std::uint32_t dim = 0;  ///< 0 = not given
  std::string cache_dir;
};

/// Adds the options above to `app`, writing into `o` (which must outlive
/// the parse).
void add_embedder_options(CLI::App& app, embedder_options& o);

/// The configuration the options describe:
///   - nothing given: nullopt;
///   - --embedder hash, or only --dim (with --embedding-cache or not): the
///     hash embedder at --dim (default 128);
///   - --embedder command: runs --embed-command through /bin/sh -c with the
///     declared profile (--embed-backend, default "command"; --embed-model and
///     --embed-revision, null when not given; --dim, required; --embed-norm).
/// Errors (invalid_argument, one line naming the flags): --embed-command or
/// another --embed-* flag without --embedder command, --embedder command
/// without --embed-command or --dim, --embedding-cache with neither
/// --embedder nor --dim.
agentctx::result<std::optional<agentctx::agdb::embedder_config>> to_embedder_config(const embedder_options& o);

/// The --embed-* flags the user gave (those that --embedder command needs
/// or configures), in the order above.
std::vector<std::string> embed_command_flags_given(const embedder_options& o);

/// The first of the options above the user gave, or nullopt: for a command
/// to refuse them in a mode that embeds nothing.
std::optional<std::string> first_embedder_flag_given(const embedder_options& o);

}  // namespace agentctx_cli
