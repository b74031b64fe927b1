// relay invalidate: invalidate_fact (section 8.7): ends the current fact of
// (project, subject, predicate) without a replacement, e.g.
//   relay invalidate --project proj_demo --subject dashboard --predicate status
//   relay invalidate ... --value live        # only while its value is "live"
// Prints how many facts were invalidated (0 or 1).
#include <iostream>
#include <optional>
#include <string>

#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct invalidate_options : writer_options {
  std::string project;
  std::string subject;
  std::string predicate;
  std::optional<std::string> value;
};

int run_invalidate(const invalidate_options& o) {
  return with_writer(o, [&](relay::store& s) {
    auto count = s.invalidate_fact(o.project, o.subject, o.predicate, o.value);
    if (!count) return report_error(o, count.error());
    if (o.json) return print_json([&](json::writer& w) { w.begin_object().key("invalidated").value(*count).end_object(); });
    std::cout << "invalidated " << count_of(*count, "fact") << '\n';
    return static_cast<int>(exit_ok);
  });
}

}  // namespace

void register_invalidate(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "invalidate", "End the current fact of a subject and predicate",
                                 run_invalidate);
  sub->add_option("--project", opts->project, "The project")->required();
  sub->add_option("--subject", opts->subject, "What the fact is about")->required();
  sub->add_option("--predicate", opts->predicate, "The property")->required();
  sub->add_option("--value", opts->value, "Only when the current value is this");
  add_writer_options(*sub, *opts);
}

}  // namespace relay_cli
