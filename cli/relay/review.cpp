// relay review: a reviewer's decision or an author's resubmission (the L3
// transitions of section 11.4), and the packages awaiting review, e.g.
//   relay review --package pkg_1a2b... --status complete --note "looks right"
//   relay review --package pkg_1a2b... --status revision_requested --note "split it"
//   relay review --package pkg_1a2b... --status awaiting_review --review-type human
//   relay review --list --project proj_demo
// A transition the protocol does not allow is invalid_transition (exit 4);
// entering awaiting_review with review_type none (a draft given no
// --review-type) is invalid_schema (exit 3).
#include <optional>
#include <string>

#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct review_options : writer_options {
  std::string package;
  std::string status;
  std::optional<std::string> review_type;
  std::optional<std::string> note;
  std::string project;
  bool list = false;
};

int list_awaiting(const review_options& o) {
  if (o.project.empty()) return usage_error(o, "--list needs --project P");
  if (!o.package.empty() || !o.status.empty() || o.note || o.review_type) {
    return usage_error(o, "--list takes --project only (not --package, --status, --review-type or --note)");
  }
  return with_reader(o, [&](const relay::store& s) {
    auto awaiting = s.awaiting_review(o.project);
    if (!awaiting) return report_error(o, awaiting.error());
    if (o.json) {
      return print_value(json::value::object_type{{"project_id", o.project},
                                                  {"packages", relay::stored_package_list_json(*awaiting)}});
    }
    print_package_lines(*awaiting, "no packages awaiting review in project " + shown(o.project));
    return static_cast<int>(exit_ok);
  });
}

int run_review(const review_options& o) {
  if (o.list) return list_awaiting(o);
  if (o.package.empty() || o.status.empty()) {
    return usage_error(o, "give --package ID and --status S, or --list --project P");
  }
  if (o.review_type && o.status != "awaiting_review") {
    return usage_error(o, "--review-type goes with --status awaiting_review");
  }
  std::optional<relay::review_type> type;
  if (o.review_type) type = relay::parse_review_type(*o.review_type);
  return with_writer(o, [&](relay::store& s) {
    auto reviewed = s.review(o.package, *relay::parse_package_status(o.status), o.note, o.project, type);
    if (!reviewed) return report_error(o, reviewed.error());
    return print_status_changed(o, **reviewed);
  });
}

}  // namespace

void register_review(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "review",
                                 "Complete a review, request a revision or resubmit; --list: what awaits review",
                                 run_review);
  sub->add_option("--package", opts->package, "The package id");
  sub->add_option("--status", opts->status, "The new status: complete, revision_requested or awaiting_review")
      ->check(CLI::IsMember({"complete", "revision_requested", "awaiting_review"}));
  sub->add_option("--review-type", opts->review_type,
                  "Who reviews, with --status awaiting_review: human or agent (default: the package's review_type, "
                  "which a draft with none must be given)")
      ->check(CLI::IsMember({"human", "agent"}));
  sub->add_option("--note", opts->note, "The reviewer's note");
  sub->add_option("--project", opts->project, "The package's project (with --list: the project to list)")
      ->check(agentctx_cli::non_empty);
  sub->add_flag("--list", opts->list, "List the project's packages awaiting review, oldest first");
  add_writer_options(*sub, *opts);
}

}  // namespace relay_cli
