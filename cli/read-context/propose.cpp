// read-context propose: proposes an update to taste or to an item's notes,
// applied only when confirmed (read-context confirm).
//   read-context propose --target notes --item iguana-01 --content "- WB still too cool" --reason "session 31"

#include "agentctx/context/proposals.hpp"
#include "common/input.hpp"
#include "read-context/command.hpp"

namespace context_cli {
namespace {

struct propose_options : common_options {
  context::proposal_request request;
  std::string file;
};

int run_propose(const propose_options& o) {
  context::proposal_request request = o.request;
  if (!o.file.empty()) {
    auto text = agentctx_cli::read_input(o.file);
    if (!text) return report(o, text.error());
    request.content += *text;
  }
  return with_root(o, [&](io::file_system& fs) -> int {
    auto made = context::proposal_book(fs, o.loader).propose(request);
    if (!made) return report(o, made.error());
    return print(o, context::to_json(*made, agentctx::json::layout::pretty),
                 "proposed " + shown(made->id) + ": " + shown(made->mode) + " " + shown(made->path) +
                     " (confirm with: read-context confirm " + shown(made->id) + " --by NAME)");
  });
}

}  // namespace

void register_propose(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "propose", "Propose an update to taste or to an item's notes", run_propose);
  add_common_options(*sub, *opts);
  auto& r = opts->request;
  sub->add_option("--target", r.target, "taste or notes")->required()->check(CLI::IsMember({"taste", "notes"}));
  sub->add_option("--item", r.item_id, "The item (for notes)");
  sub->add_option("--mode", r.mode, "append or replace")->capture_default_str()->check(CLI::IsMember({"append", "replace"}));
  auto* text = sub->add_option("--content", r.content, "The markdown");
  auto* file = sub->add_option("--file", opts->file, "Read the markdown from this file (- for standard input)");
  text->excludes(file);
  file->excludes(text);
  sub->add_option("--reason", r.reason, "Why, for whoever decides");
  sub->add_option("--by", r.proposed_by, "Who proposes")->capture_default_str();
}

}  // namespace context_cli
