// relay facts: the current facts of a project (section 7.3: a fact is
// current while it has no valid_to, also before its valid_from), or the
// facts that held at a moment (valid_from <= T < valid_to), by subject then
// predicate, e.g.
//   relay facts --project proj_demo
//   relay facts --project proj_demo --at 2026-04-10T00:00:00Z --json
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "agentctx/core/time.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct facts_options : common_options {
  std::string project;
  std::optional<std::string> at;
};

int run_facts(const facts_options& o) {
  std::optional<agentctx::utc_instant> at;
  if (o.at) {
    auto parsed = agentctx::parse_rfc3339_utc_instant(*o.at);
    if (!parsed) return usage_error(o, "--at: " + parsed.error().message);
    at = std::move(*parsed);
  }
  return with_reader(o, [&](const relay::store& s) {
    if (auto p = existing_project(s, o.project); !p) return report_error(o, p.error());
    const std::vector<const relay::fact*> facts = s.facts(o.project, at);
    if (o.json) {
      return print_json([&](json::writer& w) {
        w.begin_object();
        w.key("project_id").value(o.project);
        w.key("at").value(o.at);
        w.key("facts").begin_array();
        for (const relay::fact* f : facts) write_value(w, f->wire);
        w.end_array();
        w.end_object();
      });
    }
    if (facts.empty()) std::cout << (o.at ? "no facts held then" : "no current facts") << '\n';
    for (const relay::fact* f : facts) std::cout << fact_line(*f) << '\n';
    return static_cast<int>(exit_ok);
  });
}

}  // namespace

void register_facts(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "facts", "List a project's current facts, or those that held at --at",
                                 run_facts);
  sub->add_option("--project", opts->project, "The project")->required();
  sub->add_option("--at", opts->at,
                  "A moment, RFC 3339: the facts that held then (default: the current facts, those not ended, "
                  "including one whose valid_from is still to come)");
  add_common_options(*sub, *opts);
}

}  // namespace relay_cli
