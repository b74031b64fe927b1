// ctxstore fsck: a full consistency check of a store (turn records, every
// blob record re-hashed, the index, every head), and with --repair its
// repair (turns::check_store), e.g.
//   ctxstore fsck            # read-only: works while a writer runs
//   ctxstore fsck --repair   # as the writer: cuts damage, rebuilds derived files, checks again
// Exit 0 when the store is clean (after --repair: when nothing is left to
// fix), 1 when it is damaged.
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/turns/store_check.hpp"
#include "ctxstore/command.hpp"
#include "ctxstore/output.hpp"
#include "ctxstore/store_access.hpp"

namespace ctxstore {
namespace {

struct fsck_options : writer_options {
  bool repair = false;
};

void write_recovery_json(agentctx::json::writer& w, const turns::recovery_report& r) {
  const auto text_or_null = [&](const std::string& text) {
    write_or_null(w, text.empty() ? std::nullopt : std::optional<std::string_view>(text));
  };
  w.begin_object();
  w.key("clean").value(r.clean());
  w.key("applied").value(r.applied);
  const std::pair<std::string_view, std::uint64_t> counts[] = {
      {"pack_valid_end", r.pack_valid_end},
      {"pack_cut_bytes", r.pack_cut_bytes},
      {"turns", r.turns},
      {"turns_dropped", r.turns_dropped},
      {"log_cut_bytes", r.log_cut_bytes},
      {"head_records", r.head_records},
      {"head_records_dropped", r.head_records_dropped},
      {"head_log_cut_bytes", r.head_log_cut_bytes},
      {"blobs_indexed_from_pack", r.blobs_indexed_from_pack},
  };
  for (const auto& [name, count] : counts) w.key(name).value(count);
  w.key("snapshot_used").value(r.snapshot_used);
  w.key("index_rebuilt").value(r.index_rebuilt);
  w.key("index_problem");
  text_or_null(r.index_problem);
  w.key("first_problem");
  text_or_null(r.first_problem);
  w.end_object();
}

int run_fsck(const fsck_options& o) {
  turns::check_options options;
  options.repair = o.repair;
  options.store.wait_for_lock = o.wait;
  auto report = turns::check_store(agentctx::io::default_file_system(), o.store, options);
  if (!report) return report_open_error(report.error());
  // After a repair the recovery part says what was cut; the store is clean
  // when the check that followed found nothing.
  const bool clean = report->ok();
  if (o.json) {
    print_json([&](agentctx::json::writer& w) {
      w.begin_object();
      w.key("ok").value(clean);
      w.key("repaired").value(report->repaired);
      w.key("turns_checked").value(report->turns_checked);
      w.key("blobs_checked").value(report->blobs_checked);
      w.key("duplicate_blob_records").value(report->duplicate_blob_records);
      w.key("contexts_checked").value(report->contexts_checked);
      w.key("recovery");
      write_recovery_json(w, report->recovery);
      w.key("problems").begin_array();
      for (const turns::check_problem& p : report->problems) {
        w.begin_object();
        w.key("file").value(p.file);
        w.key("offset");
        write_or_null(w, p.offset == agentctx::error::no_offset ? std::nullopt : std::optional(p.offset));
        w.key("message").value(p.message);
        w.end_object();
      }
      w.end_array();
      w.end_object();
    });
    return clean ? exit_ok : exit_failure;
  }
  if (!report->recovery.clean()) {
    std::cout << "recovery " << describe_recovery(report->recovery, report->repaired) << '\n';
  }
  for (const turns::check_problem& p : report->problems) {
    std::cout << agentctx_cli::printable_error(agentctx::make_error(agentctx::errc::corrupt, p.message, p.file, p.offset))
              << '\n';
  }
  const std::string checked = "checked " + count_of(report->turns_checked, "turn") + ", " +
                              count_of(report->blobs_checked, "blob") + " and " +
                              count_of(report->contexts_checked, "context");
  if (clean) {
    std::cout << (report->repaired ? "repaired; clean: " : "clean: ") << checked << '\n';
    return exit_ok;
  }
  // A repair applied what recovery found: only what is still wrong counts.
  const std::size_t found = report->problems.size() + (report->repaired || report->recovery.clean() ? 0 : 1);
  std::cout << "DAMAGED: " << count_of(found, "problem") << "; " << checked
            << (report->repaired ? "" : " (ctxstore fsck --repair fixes what recovery can cut)") << '\n';
  return exit_failure;
}

}  // namespace

void register_fsck(CLI::App& app, command_table& table) {
  auto [sub, opts] =
      add_command(app, table, "fsck", "Check every record of a store; --repair cuts damage and rebuilds", run_fsck);
  sub->add_flag("--repair", opts->repair,
                "Open as the writer, cut damage recovery finds (even inside the durable part), rebuild derived files");
  add_writer_options(*sub, *opts);
}

}  // namespace ctxstore
