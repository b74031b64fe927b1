// The embedder of pull --mode relevant and orchestrate --focus: the one the
// shared embedder flags describe (cli/common/embedder_options.hpp), the
// built-in hash embedder when none is given, its vectors cached in
// STORE/embeddings unless --embedding-cache names another folder (or not at
// all when the store's folder may not be written).
#pragma once

#include <unistd.h>

#include <memory>
#include <string>
#include <utility>

#include "agentctx/agdb/embedder_config.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "common/embedder_options.hpp"
#include "relay/command.hpp"

namespace relay_cli {

/// Builds the embedder and returns what `body` returns for it, or the exit
/// code of the failure (reported: flags that do not fit together are a
/// usage error).
template <class Body>
int with_search_embedder(const common_options& o, const agentctx_cli::embedder_options& flags, Body&& body) {
  agentctx_cli::embedder_options chosen = flags;
  if (chosen.embedder.empty()) chosen.embedder = "hash";
  auto config = agentctx_cli::to_embedder_config(chosen);
  if (!config) return usage_error(o, config.error().message);
  agentctx::agdb::embedder_config& c = **config;
  if (!c.cache_directory) {
    // The default cache lives in the store's folder. A reader of a store it
    // may not write (a read-only copy) keeps no cache instead of failing.
    const std::string dir = agentctx::io::join_path(o.store, "embeddings");
    const bool usable = ::access(dir.c_str(), F_OK) == 0 ? ::access(dir.c_str(), W_OK) == 0
                                                          : ::access(o.store.c_str(), W_OK) == 0;
    if (usable) c.cache_directory = dir;
  }
  auto embedder = agentctx::agdb::make_embedder(c, agentctx::io::default_file_system());
  if (!embedder) return report_error(o, embedder.error());
  return body(**embedder);
}

}  // namespace relay_cli
