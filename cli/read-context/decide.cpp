// read-context confirm | decline: a human's decision on a proposal, logged
// with actor and time.
//   read-context confirm prop_0123456789abcdef --by jordan [--note "yes"]
//   read-context decline prop_0123456789abcdef --by jordan [--note "not now"]
#include "agentctx/context/proposals.hpp"
#include "read-context/command.hpp"

namespace context_cli {
namespace {

struct decide_options : common_options {
  std::string id;
  std::string by;
  std::string note;
};

int decide(const decide_options& o, bool confirm) {
  return with_root(o, [&](io::file_system& fs) -> int {
    context::proposal_book book(fs, o.loader);
    auto decided = confirm ? book.confirm(o.id, o.by, o.note) : book.decline(o.id, o.by, o.note);
    if (!decided) return report(o, decided.error());
    return print(o, context::to_json(*decided, agentctx::json::layout::pretty),
                 shown(decided->status) + " " + shown(decided->id) + " (" + shown(decided->path) + ")" +
                     (decided->result_hash.empty() ? "" : "; now " + decided->result_hash));
  });
}

int run_confirm(const decide_options& o) { return decide(o, true); }
int run_decline(const decide_options& o) { return decide(o, false); }

void add_decide_options(CLI::App& sub, decide_options& o) {
  sub.add_option("id", o.id, "The proposal id (prop_...)")->required();
  sub.add_option("--by", o.by, "Who decides")->required();
  sub.add_option("--note", o.note, "Why");
  add_common_options(sub, o);
}

}  // namespace

void register_confirm(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "confirm",
                                 "Apply a pending proposal (exit 5 if its file changed since)", run_confirm);
  add_decide_options(*sub, *opts);
}

void register_decline(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "decline", "Decline a pending proposal", run_decline);
  add_decide_options(*sub, *opts);
}

}  // namespace context_cli
