// agentctx/agdb/embedder_config.hpp: which embedder to use, as data, and the
// factory that builds it.
//
// Tools describe the embedder they want in an `embedder_config` (from flags
// or a configuration file) and get a ready embedder from make_embedder():
//
//   auto config = hash_config(384);
//   config.cache_directory = ".agentctx/embeddings";
//   auto embedder = make_embedder(config, io::default_file_system());
//
// To embed queries for a layer, config_for_profile() answers whether this
// build can reproduce the layer's vectors by itself (seed 000 section 8.4.8:
// the active profile must match the layer's).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agentctx/agdb/caching_embedder.hpp"
#include "agentctx/agdb/command_embedder.hpp"
#include "agentctx/agdb/embedder.hpp"
#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::agdb {

struct embedder_config {
  enum class backend_kind {
    hash,     ///< the built-in hash_embedder
    command,  ///< a command_embedder running `command`
  };
  backend_kind kind = backend_kind::hash;
  /// hash: hash_embedding_profile(dim) ("hash", null model and revision,
  /// output_norm "none"); command: the profile the user declares.
  embedding_profile profile = hash_embedding_profile(hash_embedder::default_dim);
  /// command: the program and its arguments.
  std::vector<std::string> command;
  /// When set, vectors are cached in this directory (caching_embedder).
  std::optional<std::string> cache_directory;
  /// command: how long the program may neither read nor answer (zero: forever).
  std::chrono::milliseconds timeout{60000};
};

/// The configuration of the hash embedder at `dim`.
inline embedder_config hash_config(std::uint32_t dim) {
  embedder_config config;
  config.profile = hash_embedding_profile(dim);
  return config;
}

/// Builds the embedder `config` describes, wrapped in a caching_embedder
/// when cache_directory is set (the cache lives in `fs`).
/// Errors: invalid_argument for a dim of 0, a hash config whose profile is
/// not hash_embedding_profile(dim), a command config with no command, no
/// backend name, or an output_norm other than "none" or "l2"; the errors of
/// embedding_cache::open(). A command is not started here but by the first
/// embed().
inline result<std::unique_ptr<embedder>> make_embedder(const embedder_config& config, io::file_system& fs) {
  const embedding_profile& profile = config.profile;
  if (profile.dim == 0) return fail(errc::invalid_argument, "the embedding dimension is 0");
  std::unique_ptr<embedder> made;
  if (config.kind == embedder_config::backend_kind::hash) {
    if (profile != hash_embedding_profile(profile.dim)) {
      return fail(errc::invalid_argument, "the hash embedder's profile is " +
                                              describe(hash_embedding_profile(profile.dim)) + ", not " +
                                              describe(profile));
    }
    made = std::make_unique<hash_embedder>(profile.dim);
  } else {
    if (config.command.empty() || config.command[0].empty()) {
      return fail(errc::invalid_argument, "the command embedder needs a command to run");
    }
    if (profile.backend.empty()) return fail(errc::invalid_argument, "the command embedder needs a backend name");
    if (profile.output_norm != "none" && profile.output_norm != "l2") {
      return fail(errc::invalid_argument, "output_norm must be \"none\" or \"l2\", not \"" + profile.output_norm + "\"");
    }
    made = std::make_unique<command_embedder>(command_embedder_options{config.command, profile, config.timeout});
  }
  if (!config.cache_directory) return made;
  auto cached = caching_embedder::open(std::move(made), fs, *config.cache_directory);
  if (!cached) return unexpected(std::move(cached).error());
  return std::unique_ptr<embedder>(std::move(*cached));
}

/// The configuration that reproduces the vectors of a layer whose metadata
/// declares `profile`: the hash config when it is a hash profile
/// (hash_embedding_profile(dim) with dim >= 1).
/// Errors: unsupported for any other profile, e.g. "layer profile
/// candle:all-minilm-l6-v2@main(dim=384, norm=none) needs an embedder this
/// build cannot run; configure one with --embedder command ... or search with
/// --query-vec".
inline result<embedder_config> config_for_profile(const embedding_profile& profile) {
  if (profile.dim != 0 && profile == hash_embedding_profile(profile.dim)) return hash_config(profile.dim);
  return fail(errc::unsupported, "layer profile " + describe(profile) +
                                     " needs an embedder this build cannot run; configure one with --embedder "
                                     "command ... or search with --query-vec");
}

}  // namespace agentctx::agdb
