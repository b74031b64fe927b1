// relay history: every fact of (project, subject, predicate), oldest first,
// with the span each held (section 7.3), e.g.
//   relay history --project proj_demo --subject longmemeval_s --predicate recall_any_at_5
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct history_options : common_options {
  std::string project;
  std::string subject;
  std::string predicate;
};

int run_history(const history_options& o) {
  return with_reader(o, [&](const relay::store& s) {
    if (auto p = existing_project(s, o.project); !p) return report_error(o, p.error());
    // No fact's subject or predicate is anything but UTF-8 (exit 3, as elsewhere).
    for (const auto& [name, text] : {std::pair<std::string_view, std::string_view>{"subject", o.subject},
                                     std::pair<std::string_view, std::string_view>{"predicate", o.predicate}}) {
      if (!agentctx::is_valid_utf8(text)) return report_error(o, relay::invalid_utf8_input(name));
    }
    const std::vector<const relay::fact*> facts = s.history(o.project, o.subject, o.predicate);
    if (o.json) {
      return print_json([&](json::writer& w) {
        w.begin_object();
        w.key("project_id").value(o.project);
        w.key("subject").value(o.subject);
        w.key("predicate").value(o.predicate);
        w.key("facts").begin_array();
        for (const relay::fact* f : facts) write_value(w, f->wire);
        w.end_array();
        w.end_object();
      });
    }
    if (facts.empty()) std::cout << "no facts of " << shown(o.subject) << " " << shown(o.predicate) << '\n';
    for (const relay::fact* f : facts) std::cout << fact_line(*f) << (f->is_current() ? "  (current)" : "") << '\n';
    return static_cast<int>(exit_ok);
  });
}

}  // namespace

void register_history(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "history", "List every fact of a subject and predicate, oldest first",
                                 run_history);
  sub->add_option("--project", opts->project, "The project")->required();
  sub->add_option("--subject", opts->subject, "What the facts are about")->required();
  sub->add_option("--predicate", opts->predicate, "The property")->required();
  add_common_options(*sub, *opts);
}

}  // namespace relay_cli
