// The --base/--user/--delta/--local options of the subcommands that work on a
// stack of layers, and the layer locations they name.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "agentctx/agdb/layer_stack.hpp"

namespace agentsdb {

struct layer_files {
  std::string paths[agentctx::agdb::layer_id_count];  // by layer_id value; "" = not given

  std::string& operator[](agentctx::agdb::layer_id layer) { return paths[static_cast<std::size_t>(layer)]; }
  const std::string& operator[](agentctx::agdb::layer_id layer) const {
    return paths[static_cast<std::size_t>(layer)];
  }

  /// Registers --base, --user, --delta and --local on `sub`; `defaults`
  /// completes each option's help text.
  void add_options(CLI::App& sub, const std::string& defaults = " in the current directory") {
    namespace agdb = agentctx::agdb;
    for (const agdb::layer_id layer : agdb::standard_layers) {
      const std::string name(agdb::layer_name(layer));
      sub.add_option("--" + name, (*this)[layer],
                     "The " + name + " layer file (default " + std::string(agdb::standard_file_name(layer)) +
                         defaults + ")");
    }
  }

  /// All four layers: the given files, else the standard names in
  /// `directory` ("" = the current directory); none required.
  std::vector<agentctx::agdb::layer_location> all_four(const std::string& directory = "") const {
    std::vector<agentctx::agdb::layer_location> locations = agentctx::agdb::standard_layer_locations(directory);
    for (agentctx::agdb::layer_location& location : locations) {
      if (!(*this)[location.id].empty()) location.path = (*this)[location.id];
    }
    return locations;
  }

  /// Only the given files, each required; all four standard files (none
  /// required) when no file is given.
  std::vector<agentctx::agdb::layer_location> given_or_standard() const {
    std::vector<agentctx::agdb::layer_location> given;
    for (const agentctx::agdb::layer_id layer : agentctx::agdb::standard_layers) {
      if (!(*this)[layer].empty()) given.push_back({layer, (*this)[layer], true});
    }
    return given.empty() ? agentctx::agdb::standard_layer_locations() : given;
  }
};

}  // namespace agentsdb
