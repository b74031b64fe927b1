// ctxstore last, before, range: pages of one context's chain (its head and
// the head's ancestors), oldest first, e.g.
//   ctxstore last   --context 0123456789abcdef -n 64            # seed GET_LAST
//   ctxstore before --context 0123456789abcdef --turn 4711 -n 64  # seed GET_BEFORE
//   ctxstore range  --context 0123456789abcdef --start 100 -n 20  # depths [100, 120), seed 7.4
// Each page carries a next cursor: given to `before --turn` it pages further
// back; 0 means the root was reached. --payloads adds the payloads.
#include <cstdint>
#include <limits>

#include "ctxstore/command.hpp"
#include "ctxstore/output.hpp"
#include "ctxstore/store_access.hpp"

namespace ctxstore {
namespace {

struct before_options : page_options {
  turns::turn_id turn = 0;
};

struct range_options : page_options {
  std::uint32_t start = 0;
};

int run_last(const page_options& o) {
  return with_reader(o, [&](const turns::turn_store& s) { return print_page(s, o, s.last(o.context, o.count)); });
}

int run_before(const before_options& o) {
  return with_reader(o, [&](const turns::turn_store& s) { return print_page(s, o, s.before(o.context, o.turn, o.count)); });
}

int run_range(const range_options& o) {
  return with_reader(o, [&](const turns::turn_store& s) { return print_page(s, o, s.range(o.context, o.start, o.count)); });
}

}  // namespace

void register_last(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "last", "List the last turns of a context, oldest first", run_last);
  add_page_options(*sub, *opts);
}

void register_before(CLI::App& app, command_table& table) {
  auto [sub, opts] =
      add_command(app, table, "before", "List the turns before a cursor, oldest first (paging back)", run_before);
  add_page_options(*sub, *opts);
  sub->add_option("--turn", opts->turn, "The cursor: the turn after the wanted ones (a page's next cursor)")
      ->required()
      ->transform(turn_number);
}

void register_range(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "range", "List a context's turns from a depth on, oldest first", run_range);
  add_page_options(*sub, *opts);
  sub->add_option("--start", opts->start, "The depth of the first turn (the root is at 0)")
      ->required()
      ->transform(whole_number(0, std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace ctxstore
