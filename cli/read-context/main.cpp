// read-context: the command-line frontend for the context loader (seed 003):
// the session-start bundle of an item, the full notes, propose and confirm
// (or decline) updates to taste and notes, the decision log, and `serve`,
// the same as MCP tools. Each subcommand lives in its own file.
#include "agentctx/core/version.hpp"
#include "read-context/command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"read-context: the bounded session-start context of an item (taste, brief, notes, recent log, gaps)",
               "read-context"};
  app.set_version_flag("--version", "read-context (agentctx) " + std::string(agentctx::version));
  app.require_subcommand(1);
  app.footer("Every command takes --root DIR (default: the current directory), the layout options and --json.\n" +
             std::string(context_cli::exit_codes_help) + "\nRun 'read-context COMMAND --help' for the options of a command.");
  context_cli::command_table table;
  for (context_cli::registration* add :
       {context_cli::register_show, context_cli::register_notes, context_cli::register_propose,
        context_cli::register_proposals, context_cli::register_confirm, context_cli::register_decline,
        context_cli::register_log, context_cli::register_serve}) {
    add(app, table);
  }
  return agentctx_cli::run_command_line(app, table, argc, argv, context_cli::program_name);
}
