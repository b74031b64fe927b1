// agent-memory: the command-line frontend for agent memory (seed 004):
// session logs, the summary and the schema under .github/agent-memory/ of a
// repository, and `serve`, the same operations as MCP tools. Each
// subcommand lives in its own file; this one wires them together, and
// cli/common turns argument errors into a one-line message and exit code 2.
#include "agent-memory/command.hpp"
#include "agentctx/core/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"agent-memory: structured, repository-local memory for AI agents (session logs and a summary)",
               "agent-memory"};
  app.set_version_flag("--version", "agent-memory (agentctx) " + std::string(agentctx::version));
  app.require_subcommand(1);
  app.footer("Every command but serve takes --agent NAME, --repo-root DIR (default: the current directory) and --json.\n" +
             std::string(memory_cli::exit_codes_help) + "\nRun 'agent-memory COMMAND --help' for the options of a command.");
  memory_cli::command_table table;
  for (memory_cli::registration* add :
       {memory_cli::register_start_session, memory_cli::register_append, memory_cli::register_read_summary,
        memory_cli::register_update_summary, memory_cli::register_list_sessions, memory_cli::register_serve}) {
    add(app, table);
  }
  return agentctx_cli::run_command_line(app, table, argc, argv, memory_cli::program_name);
}
