// relay flag: flag_for_review (section 8.5): moves a package to
// awaiting_review for a human or an agent, e.g.
//   relay flag --package pkg_1a2b... --review-type human --note "check the migration"
// A package awaiting review may be flagged again (another reviewer, or a
// note; the same reviewer without a note changes nothing). A complete
// package cannot be flagged (invalid_transition, exit 4).
#include <optional>
#include <string>

#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct flag_options : writer_options {
  std::string package;
  std::string review_type;
  std::optional<std::string> note;
  std::string project;
};

int run_flag(const flag_options& o) {
  return with_writer(o, [&](relay::store& s) {
    auto flagged = s.flag_for_review(o.package, *relay::parse_review_type(o.review_type), o.note, o.project);
    if (!flagged) return report_error(o, flagged.error());
    return print_status_changed(o, **flagged);
  });
}

}  // namespace

void register_flag(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "flag", "Flag a package for review by a human or an agent", run_flag);
  sub->add_option("--package", opts->package, "The package id")->required();
  sub->add_option("--review-type", opts->review_type, "Who reviews: human or agent")
      ->required()
      ->check(CLI::IsMember({"human", "agent"}));
  sub->add_option("--note", opts->note, "What to review");
  sub->add_option("--project", opts->project, "The package's project (needed when its id is in several)")
      ->check(agentctx_cli::non_empty);
  add_writer_options(*sub, *opts);
}

}  // namespace relay_cli
