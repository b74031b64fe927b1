// ctxstore: the command-line frontend for the turn store (seed 002). Each
// subcommand lives in its own file (the pages last/before/range share
// pages.cpp, create and fork create.cpp); this one wires them together, and
// cli/common turns argument errors into a one-line message and exit code 2.
#include "ctxstore/command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"ctxstore: append, fork, page through and check a turn store (turn DAG + blob store)", "ctxstore"};
  app.set_version_flag("--version", "ctxstore (agentctx) 0.1.0");
  app.require_subcommand(1);
  app.footer("Context ids are 16 hex digits; turn ids are decimal; hashes are 64 hex digits.\n"
             "Exit codes: 0 success, 1 damaged data / not found, 2 usage or I/O error (a locked store too).\n"
             "Run 'ctxstore COMMAND --help' for the options of a command.");

  ctxstore::command_table table;
  for (ctxstore::registration* add : {ctxstore::register_init, ctxstore::register_create, ctxstore::register_fork,
                                      ctxstore::register_append, ctxstore::register_last, ctxstore::register_before,
                                      ctxstore::register_range, ctxstore::register_replay, ctxstore::register_blob,
                                      ctxstore::register_contexts, ctxstore::register_stats, ctxstore::register_fsck}) {
    add(app, table);
  }

  return agentctx_cli::run_command_line(app, table, argc, argv, ctxstore::program_name);
}
