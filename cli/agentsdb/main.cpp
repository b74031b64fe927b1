// agentsdb: command-line frontend for AGENTS.db layers (seed 000).
#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"agentsdb: inspect and validate AGENTS.db layer files", "agentsdb"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
