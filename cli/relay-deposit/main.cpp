// relay-deposit: the design card's one-shot deposit into a Relay store, the
// same code as `relay deposit` (cli/relay/deposit.hpp), e.g.
//   relay-deposit package.json
//   make-package | relay-deposit --store ~/.relay --json -
// Prints the package id and its content hash; exit codes as relay's.
#include "agentctx/core/version.hpp"
#include "relay/deposit.hpp"

int main(int argc, char** argv) {
  CLI::App app{"relay-deposit: deposit one Context Package into a Relay store and print its id and hash",
               "relay-deposit"};
  app.set_version_flag("--version", "relay-deposit (agentctx) " + std::string(agentctx::version));

  relay_cli::deposit_options options;
  options.program = "relay-deposit";
  relay_cli::add_deposit_options(app, options);
  relay_cli::command_table table;
  table.add(&app, [&options] { return relay_cli::run_deposit(options); });
  return relay_cli::run_relay_command_line(app, table, argc, argv, options.program);
}
