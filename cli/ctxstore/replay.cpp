// ctxstore replay: the whole chain from the root to a turn, oldest first
// (seed 7.1): what an agent reloads to continue from that turn, e.g.
//   ctxstore replay --turn 4711 --payloads --json
#include "ctxstore/command.hpp"
#include "ctxstore/output.hpp"
#include "ctxstore/store_access.hpp"

namespace ctxstore {
namespace {

struct replay_options : listing_options {
  turns::turn_id turn = 0;
};

int run_replay(const replay_options& o) {
  return with_reader(o, [&](const turns::turn_store& s) {
    auto chain = s.replay(o.turn);
    if (!chain) return report_error(chain.error());
    listing_frame frame;
    frame.json_members = [&](agentctx::json::writer& w) { w.key("turn").value(o.turn); };
    return print_turns(s, *chain, o, frame);
  });
}

}  // namespace

void register_replay(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "replay", "List the chain from the root to a turn, oldest first", run_replay);
  sub->add_option("--turn", opts->turn, "The last turn of the chain")->required()->transform(turn_number);
  add_listing_options(*sub, *opts);
}

}  // namespace ctxstore
