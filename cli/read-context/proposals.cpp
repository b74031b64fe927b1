// read-context proposals: the pending proposals (--all: decided ones too).
#include "agentctx/context/proposals.hpp"
#include "read-context/command.hpp"

namespace context_cli {
namespace {

struct proposals_options : common_options {
  bool all = false;
};

int run_proposals(const proposals_options& o) {
  return with_root(o, [&](io::file_system& fs) -> int {
    auto list = context::proposal_book(fs, o.loader).list(!o.all);
    if (!list) return report(o, list.error());
    std::string text;
    for (const auto& p : *list) {
      text += shown(p.id) + "  " + shown(p.status) + "  " + shown(p.mode) + " " + shown(p.path) + "  by " +
              shown(p.proposed_by) + " at " + shown(p.proposed_at);
      if (!p.reason.empty()) text += "  (" + shown(p.reason) + ")";
      text += "\n";
    }
    return print(o, context::to_json(*list, agentctx::json::layout::pretty), text);
  });
}

}  // namespace

void register_proposals(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "proposals", "List the pending proposals, oldest first", run_proposals);
  add_common_options(*sub, *opts);
  sub->add_flag("--all", opts->all, "Decided proposals too");
}

}  // namespace context_cli
