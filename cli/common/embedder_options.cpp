// The embedder options the tools share (see embedder_options.hpp).
#include "common/embedder_options.hpp"

#include <string>
#include <utility>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "common/command_support.hpp"

namespace agentctx_cli {

void add_embedder_options(CLI::App& app, embedder_options& o) {
  app.add_option("--embedder", o.embedder, "Embedder: hash (built in, the default) or command (runs --embed-command)")
      ->check(CLI::IsMember({"hash", "command"}));
  app.add_option("--embed-command", o.command,
                 "With --embedder command: shell command of the embedding program (protocol: docs/embedders.md)");
  app.add_option("--embed-backend", o.backend, "With --embedder command: backend name recorded in the profile")
      ->capture_default_str();
  app.add_option("--embed-model", o.model, "With --embedder command: model name recorded in the profile");
  app.add_option("--embed-revision", o.revision, "With --embedder command: model revision recorded in the profile");
  app.add_option("--embed-norm", o.norm, "With --embedder command: output_norm recorded in the profile (none|l2)")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "l2"}));
  app.add_option("--dim", o.dim, "Embedding dimension (hash: default 128; command: required)")
      ->check(count_between(1, 65536));
  app.add_option("--embedding-cache", o.cache_dir,
                 "Directory of an embedding cache: texts embedded before are not embedded again");
}

std::vector<std::string> embed_command_flags_given(const embedder_options& o) {
  const embedder_options defaults;
  std::vector<std::string> given;
  if (!o.command.empty()) given.push_back("--embed-command");
  if (o.backend != defaults.backend) given.push_back("--embed-backend");
  if (!o.model.empty()) given.push_back("--embed-model");
  if (!o.revision.empty()) given.push_back("--embed-revision");
  if (o.norm != defaults.norm) given.push_back("--embed-norm");
  return given;
}

std::optional<std::string> first_embedder_flag_given(const embedder_options& o) {
  if (!o.embedder.empty()) return "--embedder";
  if (const std::vector<std::string> given = embed_command_flags_given(o); !given.empty()) return given.front();
  if (o.dim != 0) return "--dim";
  if (!o.cache_dir.empty()) return "--embedding-cache";
  return std::nullopt;
}

agentctx::result<std::optional<agentctx::agdb::embedder_config>> to_embedder_config(const embedder_options& o) {
  namespace agdb = agentctx::agdb;
  using agentctx::errc;
  using agentctx::fail;
  // The --embed-* flags given, for messages about flags that do not apply.
  const std::vector<std::string> command_flags = embed_command_flags_given(o);

  if (o.embedder == "command") {
    if (o.command.empty()) return fail(errc::invalid_argument, "--embedder command needs --embed-command CMD");
    if (o.dim == 0) return fail(errc::invalid_argument, "--embedder command needs --dim N (the program's vector length)");
    if (o.backend.empty()) return fail(errc::invalid_argument, "--embed-backend must not be empty");
    agdb::embedder_config config;
    config.kind = agdb::embedder_config::backend_kind::command;
    config.profile.backend = o.backend;
    if (!o.model.empty()) config.profile.model = o.model;
    if (!o.revision.empty()) config.profile.revision = o.revision;
    config.profile.dim = o.dim;
    config.profile.output_norm = o.norm;
    config.command = {"/bin/sh", "-c", o.command};
    if (!o.cache_dir.empty()) config.cache_directory = o.cache_dir;
    return std::optional<agdb::embedder_config>(std::move(config));
  }
  if (!o.embedder.empty() && o.embedder != "hash") {
    return fail(errc::invalid_argument, "--embedder must be hash or command, not '" + o.embedder + "'");
  }
  if (!command_flags.empty()) {
    return fail(errc::invalid_argument, command_flags.front() + " applies to --embedder command only");
  }
  if (o.embedder.empty() && o.dim == 0) {
    if (!o.cache_dir.empty()) {
      return fail(errc::invalid_argument, "--embedding-cache needs --embedder hash|command or --dim N");
    }
    return std::optional<agdb::embedder_config>();
  }
  agdb::embedder_config config = agdb::hash_config(o.dim != 0 ? o.dim : agdb::hash_embedder::default_dim);
  if (!o.cache_dir.empty()) config.cache_directory = o.cache_dir;
  return std::optional<agdb::embedder_config>(std::move(config));
}

}  // namespace agentctx_cli
