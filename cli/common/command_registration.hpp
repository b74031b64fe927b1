// Registering a subcommand whose options live in one struct: the subcommand,
// a fresh options object the parse fills in, and the entry of the command
// table that runs it. Shared by the tools whose subcommands are written that
// way (ctxstore, relay).
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <utility>

#include "common/command_support.hpp"

namespace agentctx_cli {

/// Adds the subcommand `name` to `parent` with a fresh Options object for its
/// options, and `run` to call on them when it is the subcommand given.
/// Returns the subcommand and the options, to add the options to it.
template <class Options>
std::pair<CLI::App*, std::shared_ptr<Options>> add_command(CLI::App& parent, command_table& table,
                                                           const std::string& name, const std::string& description,
                                                           int (*run)(const Options&)) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub = parent.add_subcommand(name, description);
  table.add(sub, [opts, run] { return run(*opts); });
  return {sub, opts};
}

}  // namespace agentctx_cli
