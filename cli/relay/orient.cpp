// relay orient: the OrientationBundle (section 8.3) that starts a session,
// e.g.
//   relay orient --project proj_demo                       # a readable briefing
//   relay orient --project proj_demo --max-tokens 2000 --json
// --json prints the bundle exactly as relay::orient builds it; the text is a
// Markdown briefing of the same contents. With --max-bytes or --max-tokens
// (both: the tighter one) the least significant items are left out until the
// bundle fits; one that cannot be made to fit is marked over budget (exit 0).
#include <iostream>
#include <optional>
#include <string>

#include "agentctx/relay/briefing.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct orient_cli_options : common_options {
  std::string project;
  unsigned window_days = relay::default_window_days;
  std::optional<std::size_t> max_bytes;
  std::optional<std::size_t> max_tokens;
  std::size_t max_packages = relay::orient_options{}.max_packages;
};

void print_package_entry(const relay::package& p) {
  std::cout << "- " << package_line(p) << "\n  by " << actor_text(p.created_by) << '\n';
  if (!p.decisions_made.empty()) std::cout << "  Decisions: " << shown(joined(p.decisions_made, "; ")) << '\n';
  if (!p.handoff_note.empty()) {
    std::cout << "  Handoff"
              << (p.estimated_next_actor ? " (next: " + std::string(relay::to_string(*p.estimated_next_actor)) + ")" : "")
              << ": " << shown(p.handoff_note) << '\n';
  }
}

int print_briefing(const common_options& o, const relay::orientation& result) {
  const json::value& bundle = result.bundle;
  auto project = relay::read_project(member(bundle, "project"));
  if (!project) return report_error(o, project.error());
  // A project without a name reads as named by its id: shown once.
  std::cout << "# Orientation: " << shown(project->name)
            << (project->name == project->project_id ? std::string() : " (" + shown(project->project_id) + ")") << '\n';
  std::cout << "Generated " << shown(text_of(bundle, "generated_at")) << " for the last "
            << count_of(count_in(bundle, "window_days"), "day") << '.'
            << (project->archived_at ? " Archived since " + shown(*project->archived_at) + "." : "") << '\n';
  if (!project->description.empty()) std::cout << shown(project->description) << '\n';

  const auto& packages = array_in(bundle, "recent_packages");
  std::cout << "\n## Recent packages (" << packages.size() << ")\n";
  if (result.packages_beyond_limit != 0) {
    std::cout << "(the newest " << count_in(member(bundle, "x-agentctx-limit"), "max_packages") << " of the window; "
              << count_of(result.packages_beyond_limit, "older package") << " left out: see --max-packages)\n";
  }
  if (packages.empty()) std::cout << "- none\n";
  for (const json::value& wire : packages) {
    auto p = relay::read_package(wire);
    if (!p) return report_error(o, p.error());
    print_package_entry(*p);
  }
  const auto& facts = array_in(bundle, "active_facts");
  std::cout << "\n## Active facts (" << facts.size() << ")\n";
  if (facts.empty()) std::cout << "- none\n";
  for (const json::value& wire : facts) {
    auto f = relay::read_fact(wire);
    if (!f) return report_error(o, f.error());
    std::cout << "- " << fact_line(*f) << '\n';
  }
  const auto& questions = array_in(bundle, "open_questions");
  std::cout << "\n## Open questions (" << questions.size() << ")\n";
  if (questions.empty()) std::cout << "- none\n";
  for (const json::value& q : questions) std::cout << "- " << shown(q.as_string()) << '\n';

  if (const json::value* budget = bundle.find("x-agentctx-budget")) {
    std::cout << "\nBudget: " << count_of(result.bytes, "byte") << " (about " << count_of(result.estimated_tokens, "token")
              << ") of at most " << count_of(count_in(*budget, "max_bytes"), "byte")
              << "; left out " << count_of(result.omitted_packages.size(), "package") << ", "
              << count_of(result.omitted_open_questions, "open question") << ", "
              << count_of(result.omitted_facts, "fact") << '\n';
    if (result.over_budget) {
      std::cout << "OVER BUDGET: the bundle could not be brought within " << count_of(count_in(*budget, "max_bytes"), "byte")
                << ": the project and the bundle's fixed members alone take more\n";
    }
  }
  return exit_ok;
}

int run_orient(const orient_cli_options& o) {
  return with_reader(o, [&](const relay::store& s) {
    relay::orient_options options;
    options.window_days = o.window_days;
    options.max_bytes = o.max_bytes;
    options.max_tokens = o.max_tokens;
    options.max_packages = o.max_packages;
    auto result = relay::orient(s, o.project, options);
    if (!result) return report_error(o, result.error());
    if (o.json) return print_value(result->bundle);
    return print_briefing(o, *result);
  });
}

}  // namespace

void register_orient(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "orient", "Print the orientation bundle that starts a session", run_orient);
  sub->add_option("--project", opts->project, "The project")->required();
  sub->add_option("--window-days", opts->window_days, "Packages created in the last N days (at most 36500)")
      ->capture_default_str()
      ->check(agentctx_cli::positive_count_at_most(relay::max_window_days));
  sub->add_option("--max-packages", opts->max_packages,
                  "At most N packages, the newest of the window (the bundle says how many it left out)")
      ->capture_default_str()
      ->check(agentctx_cli::positive_count_at_most(relay::max_orient_packages));
  sub->add_option("--max-bytes", opts->max_bytes, "Budget: at most N bytes of compact JSON (with --max-tokens: both apply)")
      ->check(agentctx_cli::positive_count_at_most(relay::max_budget_bytes));
  sub->add_option("--max-tokens", opts->max_tokens,
                  "Budget: at most N estimated tokens (bytes / 4; with --max-bytes: both apply)")
      ->check(agentctx_cli::positive_count_at_most(relay::max_budget_tokens));
  add_common_options(*sub, *opts);
}

}  // namespace relay_cli
