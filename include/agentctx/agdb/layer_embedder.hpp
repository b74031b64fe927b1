// agentctx/agdb/layer_embedder.hpp: which embedder embeds texts for a set of
// layers (a text query, an agent write).
//
// embedder_config_for_layers() picks it the same way for every caller:
//   - the embedder the user configured, when given; every selected layer
//     that records a profile must record exactly its profile;
//   - else the embedder of the profile the layers record
//     (resolve_embedding_profile: the highest selected layer that records
//     one), which this build must be able to run (config_for_profile: the
//     hash embedder; another backend needs a configured command);
//   - else, when no selected layer records a profile, the hash embedder at
//     the layers' dimension, with a warning;
//   - else, when no selected layer exists yet (a first write), the hash
//     embedder at its default dimension.
//
// make_embedder_for_layers() picks it and makes it (a command is started by
// its first embed(), not here).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedder_config.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/core/result.hpp"

namespace agentctx::agdb {

struct layer_embedder_choice {
  embedder_config config;
  std::vector<std::string> warnings;  ///< one line each
};

/// See the file comment. Errors: incompatible (a layer records another
/// profile than the configured one, naming both), unsupported (the layers'
/// profile needs an embedder this build cannot run).
inline result<layer_embedder_choice> embedder_config_for_layers(const layer_stack& stack, layer_set selected,
                                                                const std::optional<embedder_config>& configured) {
  layer_embedder_choice out;
  if (stack.present(selected).empty()) {
    out.config = configured ? *configured : hash_config(hash_embedder::default_dim);
    return out;
  }
  std::optional<embedding_profile> configured_profile;
  if (configured) configured_profile = configured->profile;
  auto resolved = resolve_embedding_profile(stack, selected, configured_profile);
  if (!resolved) return unexpected(std::move(resolved).error());
  out.warnings = std::move(resolved->warnings);
  if (configured) {
    out.config = *configured;
    return out;
  }
  auto config = config_for_profile(resolved->profile);
  if (!config) return unexpected(std::move(config).error());
  out.config = std::move(*config);
  return out;
}

struct layer_embedder {
  std::unique_ptr<embedder> instance;
  std::vector<std::string> warnings;  ///< from the choice, one line each
};

/// embedder_config_for_layers() followed by make_embedder(); the errors of both.
inline result<layer_embedder> make_embedder_for_layers(io::file_system& fs, const layer_stack& stack,
                                                       layer_set selected,
                                                       const std::optional<embedder_config>& configured) {
  auto choice = embedder_config_for_layers(stack, selected, configured);
  if (!choice) return unexpected(std::move(choice).error());
  auto instance = make_embedder(choice->config, fs);
  if (!instance) return unexpected(std::move(instance).error());
  return layer_embedder{std::move(*instance), std::move(choice->warnings)};
}

}  // namespace agentctx::agdb
