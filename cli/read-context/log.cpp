// read-context log: the decision log (proposed, confirmed, declined), newest
// first, read from the end of the file.
//   read-context log [--limit 20]
#include "agentctx/context/proposals.hpp"
#include "read-context/command.hpp"

namespace context_cli {
namespace {

struct log_options : common_options {
  std::size_t limit = 20;
};

int run_log(const log_options& o) {
  return with_root(o, [&](io::file_system& fs) -> int {
    auto log = context::proposal_book(fs, o.loader).decisions(o.limit);
    if (!log) return report(o, log.error());
    std::string text;
    for (const context::decision_record& d : log->decisions) {
      text += shown(d.at) + "  " + shown(d.decision) + "  " + shown(d.proposal_id) + "  " + shown(d.path) + "  by " +
              shown(d.actor);
      if (!d.note.empty()) text += "  (" + shown(d.note) + ")";
      text += "\n";
    }
    if (!log->exists) text += "no decisions yet (" + shown(log->path) + " does not exist)\n";
    if (log->partial_last_line) {
      text += "note: the last line of " + shown(log->path) + " was torn (a crash) and is skipped\n";
    }
    if (log->skipped_lines > 0) {
      text += "note: " + std::to_string(log->skipped_lines) + " line(s) of " + shown(log->path) +
              " are not decisions and are skipped\n";
    }
    return print(o, context::to_json(*log, agentctx::json::layout::pretty), text);
  });
}

}  // namespace

void register_log(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "log", "Print the decision log, newest first", run_log);
  add_common_options(*sub, *opts);
  sub->add_option("--limit", opts->limit, "How many decisions at most")->capture_default_str()->check(positive_count);
}

}  // namespace context_cli
