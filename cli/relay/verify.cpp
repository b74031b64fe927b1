// relay verify: re-reads the log and recomputes every package hash, as
// deposited and after each status change (relay::store::verify), e.g.
//   relay verify
// Exit 0 when every package matches its hash; 1 when any is quarantined or
// the log is damaged.
#include <iostream>
#include <string>

#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

int run_verify(const common_options& o) {
  return with_reader(o, [&](relay::store& s) {
    auto report = s.verify();
    if (!report) return report_error(o, report.error());
    const int code = report->ok() ? exit_ok : exit_failure;
    if (o.json) {
      print_json([&](json::writer& w) {
        w.begin_object();
        w.key("ok").value(report->ok());
        w.key("packages").value(report->packages);
        w.key("status_changes").value(report->status_changes);
        w.key("facts").value(report->facts);
        w.key("format_version").value(s.format_version());
        w.key("quarantined").begin_array();
        for (const std::string& q : report->quarantined) w.value(q);
        w.end_array();
        if (report->torn_tail_offset) {
          w.key("torn_tail").begin_object();
          w.key("offset").value(*report->torn_tail_offset).key("bytes").value(report->torn_tail_bytes);
          w.end_object();
        }
        w.end_object();
      });
      return code;
    }
    for (const std::string& q : report->quarantined) std::cout << "quarantined " << shown(q) << '\n';
    const std::string checked = "checked " + count_of(report->packages, "package") + ", " +
                                count_of(report->status_changes, "status change") + " and " +
                                count_of(report->facts, "fact");
    if (report->torn_tail_offset) {
      std::cout << "the log ends in an incomplete record (" << count_of(report->torn_tail_bytes, "byte")
                << " at byte " << *report->torn_tail_offset
                << "): an append a writer is making, or one a crash interrupted, never acknowledged, which the "
                   "next writer cuts, keeping its bytes beside the log\n";
    }
    if (report->ok()) {
      std::cout << "ok: " << checked << '\n';
    } else {
      std::cout << "DAMAGED: " << count_of(report->quarantined.size(), "package") << " quarantined; " << checked << '\n';
    }
    return code;
  });
}

}  // namespace

void register_verify(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "verify", "Recompute every package hash; exit 1 if any is quarantined",
                                 run_verify);
  add_common_options(*sub, *opts);
}

}  // namespace relay_cli
