// relay assert: assert_fact (section 8.6): makes VALUE the current value of
// (project, subject, predicate), superseding the current fact in the same
// atomic write (section 7.3), e.g.
//   relay assert --project proj_demo --subject longmemeval_s --predicate recall_any_at_5 --value 97.0
//   relay assert ... --valid-from 2026-04-10T12:00:00Z --source-package pkg_1a2b... --tag benchmark
//   relay assert ... --extension x-trust=0.9 --extension 'x-origin={"tool":"bench"}'
// The value already current is left as it is ("unchanged").
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/json/canonical.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct assert_options : writer_options {
  relay::fact_assertion fact;
  std::optional<std::string> asserted_by;
  std::optional<std::string> asserted_by_type;
  std::vector<std::string> extensions;  // NAME=JSON
};

int run_assert(const assert_options& o) {
  relay::fact_assertion input = o.fact;
  if (o.asserted_by) input.asserted_by = relay::actor{*o.asserted_by, *relay::parse_actor_type(*o.asserted_by_type), {}};
  for (const std::string& given : o.extensions) {
    // NAME=JSON (the validator made sure of the '='); the name's form and
    // the value are the fact's: invalid_schema when wrong, as for a deposit.
    const std::size_t equals = given.find('=');
    const std::string name = given.substr(0, equals);
    auto value = agentctx::json::parse(std::string_view(given).substr(equals + 1));
    if (!value) {
      // The offset counts in the value, not in a file: said after the reason.
      const agentctx::error& refused = value.error();
      std::string message = "--extension " + name + ": " + agentctx::json::refusal_of("the value", refused);
      if (refused.has_offset()) message += " (at byte " + std::to_string(refused.offset) + " of the value)";
      return report_error(o, agentctx::make_error(agentctx::errc::invalid_argument, std::move(message)));
    }
    input.extensions.emplace_back(name, std::move(*value));
  }
  return with_writer(o, [&](relay::store& s) {
    auto asserted = s.assert_fact(input);
    if (!asserted) return report_error(o, asserted.error());
    const relay::fact& f = *asserted->asserted;
    if (o.json) {
      return print_json([&](json::writer& w) {
        w.begin_object();
        w.key("changed").value(asserted->changed);
        w.key("superseded").value(asserted->superseded);
        w.key("fact");
        write_value(w, f.wire);
        w.end_object();
      });
    }
    std::cout << (asserted->changed ? "asserted " : "unchanged (already current) ") << fact_line(f)
              << (asserted->superseded ? ", superseding " + shown(*asserted->superseded) : "") << '\n';
    return static_cast<int>(exit_ok);
  });
}

}  // namespace

void register_assert(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "assert", "Assert a fact, superseding the current one", run_assert);
  sub->add_option("--project", opts->fact.project_id, "The project (created if new)")->required();
  sub->add_option("--subject", opts->fact.subject, "What the fact is about")->required();
  sub->add_option("--predicate", opts->fact.predicate, "The property")->required();
  sub->add_option("--value", opts->fact.value, "The value, as a string")->required();
  sub->add_option("--valid-from", opts->fact.valid_from, "When it became true, RFC 3339 UTC (default: now)");
  sub->add_option("--source-package", opts->fact.source_package_id, "The package this fact comes from");
  sub->add_option("--confidence", opts->fact.confidence,
                  "0.0 to 1.0 (default 1.0); outside it: invalid_schema (exit 3), not a number: usage error (exit 2)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // Decimal, as JSON writes numbers: no spaces, hex, nan or inf.
            // Beyond a double's range it is still a number (outside 0 to 1
            // past 1, exit 3; 0 when it underflows).
            double value = 0;
            const auto [end, problem] = std::from_chars(text.data(), text.data() + text.size(), value);
            const bool number = problem == std::errc{} ? std::isfinite(value) : problem == std::errc::result_out_of_range;
            if (!text.empty() && number && end == text.data() + text.size()) return {};
            return "must be a number from 0.0 to 1.0, not '" + text + "'";
          },
          "NUMBER", "number"));
  auto* by = sub->add_option("--asserted-by", opts->asserted_by,
                             "Who asserts it (default: the source package's created_by)");
  auto* by_type = sub->add_option("--asserted-by-type", opts->asserted_by_type, "human, agent or script")
                      ->check(CLI::IsMember({"human", "agent", "script"}));
  by->needs(by_type);
  by_type->needs(by);
  sub->add_option("--tag", opts->fact.tags, "A tag (repeatable)");
  sub->add_option("--extension", opts->extensions,
                  "An extension member of the fact, NAME=JSON with NAME starting x- (repeatable): "
                  "--extension x-trust=0.9")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return text.find('=') == std::string::npos ? "must be NAME=JSON, not '" + text + "'" : std::string();
          },
          "NAME=JSON", "extension"));
  add_writer_options(*sub, *opts, store_use::created);
}

}  // namespace relay_cli
