// relay: the command-line frontend for an Agentic Protocol store (seed 001):
// the protocol's operations (deposit, pull, orient, orchestrate, flag,
// assert, invalidate), reviews, facts, projects, sessions, backup, and the
// canonical JSON and content hash of section 6.6. Each subcommand lives in
// its own file; this one wires them together, and cli/common turns argument
// errors into a one-line message (with --json also a JSON document) and exit
// code 2.
#include "agentctx/core/version.hpp"
#include "relay/command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"relay: deposit, pull, orient and review Context Packages and facts in a Relay store", "relay"};
  app.set_version_flag("--version", "relay (agentctx) " + std::string(agentctx::version));
  app.require_subcommand(1);
  relay_cli::add_global_options(app);
  app.footer("Every command takes --store DIR (default ./.relay), before the command or after its whole name\n"
             "(relay --store DIR project list, relay project list --store DIR); all but serve take --json (one JSON\n"
             "document on stdout).\n" +
             std::string(relay_cli::exit_codes_help) + "\nRun 'relay COMMAND --help' for the options of a command.");

  relay_cli::command_table table;
  for (relay_cli::registration* add :
       {relay_cli::register_deposit, relay_cli::register_pull, relay_cli::register_orient,
        relay_cli::register_orchestrate, relay_cli::register_flag, relay_cli::register_review,
        relay_cli::register_assert, relay_cli::register_invalidate, relay_cli::register_facts,
        relay_cli::register_history, relay_cli::register_export, relay_cli::register_import,
        relay_cli::register_verify, relay_cli::register_repair, relay_cli::register_conformance, relay_cli::register_project,
        relay_cli::register_session, relay_cli::register_canonical, relay_cli::register_hash,
        relay_cli::register_serve}) {
    add(app, table);
  }

  return relay_cli::run_relay_command_line(app, table, argc, argv, relay_cli::program_name);
}
