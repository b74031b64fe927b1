// ctxstore create, fork: a new context, e.g.
//   ctxstore create                  # an empty context
//   ctxstore create --from-turn 42   # whose head is turn 42
//   ctxstore fork --from-turn 42     # the same, the turn required (seed CTX_FORK)
// O(1), copies nothing: appends to the new context leave the others as they
// were. Prints the new context's id (16 hex digits).
#include "ctxstore/command.hpp"
#include "ctxstore/output.hpp"
#include "ctxstore/store_access.hpp"

namespace ctxstore {
namespace {

struct create_options : writer_options {
  turns::turn_id from_turn = 0;
};

int run_create(const create_options& o) {
  return with_writer(o, [&](turns::turn_store& s) { return print_new_context(o, s.create_context(o.from_turn), "created"); });
}

int run_fork(const create_options& o) {
  return with_writer(o, [&](turns::turn_store& s) { return print_new_context(o, s.fork(o.from_turn), "forked"); });
}

}  // namespace

void register_create(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "create", "Create a context, empty or starting at a turn", run_create);
  sub->add_option("--from-turn", opts->from_turn, "The new context's head (default: none, an empty context)")
      ->transform(turn_number);
  add_writer_options(*sub, *opts);
}

void register_fork(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "fork", "Create a context that continues from a turn", run_fork);
  sub->add_option("--from-turn", opts->from_turn, "The turn the new context starts at")
      ->required()
      ->transform(turn_number);
  add_writer_options(*sub, *opts);
}

}  // namespace ctxstore
