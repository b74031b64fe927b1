// relay repair: salvages a store whose log is damaged (relay::store::repair):
// keeps every record that survives and still applies, lists what is lost,
// and keeps the log as found beside it, e.g.
//   relay repair --dry-run      # what would be kept and lost
//   relay repair                # do it
// Exit 0 when the store is sound or was repaired (or, with --dry-run, could
// be); the usual codes when the store is missing, locked or not a Relay log.
#include <iostream>
#include <string>

#include "agentctx/io/posix_file_system.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct repair_cli_options : writer_options {
  bool dry_run = false;
};

int run_repair(const repair_cli_options& o) {
  relay::repair_options options;
  options.dry_run = o.dry_run;
  options.wait_for_lock = o.wait;
  if (const int refused = check_store_argument(o)) return refused;
  auto report = relay::store::repair(agentctx::io::default_file_system(), o.store, options);
  if (!report) return report_open_error(o, report.error());
  if (o.json) {
    return print_json([&](json::writer& w) {
      w.begin_object();
      w.key("needed").value(report->needed()).key("dry_run").value(o.dry_run);
      w.key("rewritten").value(report->rewritten).key("log_bytes").value(report->log_bytes);
      w.key("records_kept").value(report->records_kept).key("header_rewritten").value(report->header_rewritten);
      w.key("lost").begin_array();
      for (const relay::repair_loss& l : report->lost) {
        w.begin_object().key("offset").value(l.offset).key("bytes").value(l.bytes).key("what").value(l.what).end_object();
      }
      w.end_array();
      w.key("recreated").begin_array();
      for (const relay::repair_recreation& r : report->recreated) {
        w.begin_object().key("offset").value(r.offset).key("project_id").value(r.project_id);
        w.key("created_at").value(r.created_at).end_object();
      }
      w.end_array();
      w.key("relinked").begin_array();
      for (const relay::repair_relink& r : report->relinked) {
        w.begin_object().key("offset").value(r.offset).key("fact_id").value(r.fact_id);
        w.key("lost_fact_id").value(r.lost_fact_id).key("supersedes").value(r.supersedes).end_object();
      }
      w.end_array();
      if (!report->backup.empty()) w.key("backup").value(report->backup);
      w.end_object();
    });
  }
  for (const relay::repair_loss& l : report->lost) {
    std::cout << "lost at byte " << l.offset << " (" << count_of(l.bytes, "byte")
              << "): " << agentctx::printable_line(l.what) << '\n';
  }
  for (const relay::repair_recreation& r : report->recreated) {
    std::cout << "project " << shown(r.project_id) << " lost the record that created it: recreated as of "
              << shown(r.created_at) << " (from the record at byte " << r.offset
              << ")\n";
  }
  for (const relay::repair_relink& r : report->relinked) {
    std::cout << shown(r.fact_id) << " (the fact recorded at byte " << r.offset << ") ";
    if (r.lost_fact_id) {
      std::cout << "superseded " << shown(*r.lost_fact_id) << ", which is lost: ";
    } else {
      std::cout << "superseded nothing while " << shown(r.supersedes.value_or("")) << " was current (the record "
                << "that ended it is lost): ";
    }
    if (r.supersedes) {
      std::cout << "it now supersedes " << shown(*r.supersedes) << ", which stays valid until it\n";
    } else {
      std::cout << "it supersedes nothing now\n";
    }
  }
  if (report->header_rewritten) std::cout << "the log header is damaged and is written anew\n";
  std::string kept = count_of(report->records_kept, "record") + " kept";
  if (!report->relinked.empty()) kept += " (" + std::to_string(report->relinked.size()) + " amended)";
  if (!report->needed()) {
    std::cout << "nothing to repair: " << kept << ", none lost\n";
  } else if (o.dry_run) {
    std::cout << "dry run: " << kept << ", " << count_of(report->lost.size(), "lost part") << "; nothing was changed\n";
  } else {
    std::cout << "repaired: " << kept << ", " << count_of(report->lost.size(), "lost part") << "; the damaged log is kept as "
              << shown(report->backup) << '\n';
  }
  return exit_ok;
}

}  // namespace

void register_repair(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "repair",
                                 "Salvage a damaged store: keep every record that survives, list what is lost, "
                                 "keep the damaged log beside it",
                                 run_repair);
  add_writer_options(*sub, *opts);
  sub->add_flag("--dry-run", opts->dry_run, "Report what would be kept and lost; change nothing");
}

}  // namespace relay_cli
