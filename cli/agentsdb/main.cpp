// agentsdb: the command-line frontend for AGENTS.db layer files (seed 000).
// Each subcommand lives in its own file; this one wires them together and
// turns argument errors into a one-line message and exit code 2.
#include "agentsdb/command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"agentsdb: build, search, write, inspect and validate AGENTS.db context layers", "agentsdb"};
  app.set_version_flag("--version", "agentsdb (agentctx) 0.1.0");
  app.require_subcommand(1);
  app.footer("Exit codes: 0 success, 1 invalid or damaged data / not found, 2 usage or I/O error.\n"
             "Run 'agentsdb COMMAND --help' for the options of a command.");

  agentsdb::command_table table;
  agentsdb::register_compile(app, table);
  agentsdb::register_inspect(app, table);
  agentsdb::register_search(app, table);
  agentsdb::register_validate(app, table);
  agentsdb::register_write(app, table);
  agentsdb::register_proposals(app, table);
  agentsdb::register_promote(app, table);
  agentsdb::register_propose(app, table);
  agentsdb::register_diff(app, table);
  agentsdb::register_compact(app, table);
  agentsdb::register_serve(app, table);
  agentsdb::register_keygen(app, table);
  agentsdb::register_sign(app, table);
  agentsdb::register_verify(app, table);
  agentsdb::register_export(app, table);
  agentsdb::register_import(app, table);

  return agentctx_cli::run_command_line(app, table, argc, argv, agentsdb::program_name);
}
