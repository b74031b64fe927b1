// ctxstore stats: counts and sizes of a store: turns, contexts, distinct
// blobs, payload bytes before dedup, blob bytes raw and stored, the dedup
// and compression ratios, file sizes, e.g.
//   ctxstore stats [--json]
// Reads every turn record (O(turns)).
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <string>
#include <string_view>

#include "ctxstore/command.hpp"
#include "ctxstore/output.hpp"
#include "ctxstore/store_access.hpp"

namespace ctxstore {
namespace {

std::string two_decimals(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

int run_stats(const common_options& o) {
  auto opened = open_reader(o);
  if (!opened) return report_open_error(opened.error());
  auto s = (*opened)->stats();
  if (!s) return report_error(s.error());
  if (o.json) {
    return print_json([&](agentctx::json::writer& w) {
      w.begin_object();
      w.key("turns").value(s->turns);
      w.key("contexts").value(s->contexts);
      w.key("blobs").value(s->blobs);
      w.key("payload_bytes").value(s->payload_bytes);
      w.key("blob_raw_bytes").value(s->blob_raw_bytes);
      w.key("blob_stored_bytes").value(s->blob_stored_bytes);
      w.key("dedup_ratio").value(s->dedup_ratio());
      w.key("compression_ratio").value(s->compression_ratio());
      w.key("pack_bytes").value(s->pack_bytes);
      w.key("turn_log_bytes").value(s->turn_log_bytes);
      w.key("head_log_bytes").value(s->head_log_bytes);
      w.key("index_runs").value(s->index_runs);
      w.key("index_tail").value(s->index_tail);
      w.end_object();
    });
  }
  const auto row = [](std::string_view label, const std::string& value) {
    std::cout << std::left << std::setw(19) << label << value << '\n';
  };
  row("turns", std::to_string(s->turns));
  row("contexts", std::to_string(s->contexts));
  row("blobs", std::to_string(s->blobs));
  row("payload bytes", std::to_string(s->payload_bytes) + " (all turns, before dedup)");
  row("bytes raw", std::to_string(s->blob_raw_bytes) + " (distinct blobs)");
  row("bytes stored", std::to_string(s->blob_stored_bytes) + " (in blobs.pack, after compression)");
  row("dedup ratio", two_decimals(s->dedup_ratio()));
  row("compression ratio", two_decimals(s->compression_ratio()));
  row("files", "blobs.pack " + std::to_string(s->pack_bytes) + ", turns.log " + std::to_string(s->turn_log_bytes) +
                   ", heads.log " + std::to_string(s->head_log_bytes) + " bytes");
  return exit_ok;
}

}  // namespace

void register_stats(CLI::App& app, command_table& table) {
  auto [sub, opts] =
      add_command(app, table, "stats", "Count turns, contexts and blobs; bytes raw and stored; dedup ratio", run_stats);
  add_common_options(*sub, *opts);
}

}  // namespace ctxstore
