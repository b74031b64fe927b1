// agentsdb import: an export (JSON or NDJSON, agentsdb export or the
// reference's) added to the local, delta or user layer, e.g.
//   agentsdb import --in context.ndjson --target user
//   agentsdb import --in - --target local --dry-run --json < context.json
// agdb::import_export does the work: dedupe by content hash, fresh ids with
// chunk-id sources rewritten (or --preserve-ids), vectors kept when the
// export's profile is the layers' and computed again otherwise, one atomic
// write under the layer's lock.
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agentctx/agdb/layer_export.hpp"
#include "agentctx/agdb/layer_import.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"
#include "agentsdb/layer_files.hpp"
#include "agentsdb/output.hpp"
#include "common/embedder_options.hpp"
#include "common/input.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;

struct import_cli_options {
  std::string in;
  std::string target;
  layer_files files;
  std::string dir;
  agentctx_cli::embedder_options embedder;
  bool preserve_ids = false;
  bool no_dedupe = false;
  bool dry_run = false;
  bool json = false;
};

int run_import(const import_cli_options& o) {
  agdb::import_request request;
  const auto target = agdb::parse_layer_name(o.target);
  if (!target || *target == agdb::layer_id::base) {
    return usage_error("--target must be local, delta or user, not '" + o.target + "'");
  }
  request.target = *target;
  request.layers = o.files.all_four(o.dir);
  request.preserve_ids = o.preserve_ids;
  request.dedupe = !o.no_dedupe;
  request.dry_run = o.dry_run;
  auto configured = to_embedder_config(o.embedder);
  if (!configured) return usage_error(configured.error().message);
  request.embedder = *configured;

  auto text = agentctx_cli::read_input(o.in);
  if (!text) return report_error(text.error());
  auto bundle = agdb::parse_export(*text);
  if (!bundle) return report_error(bundle.error().with_path(agentctx_cli::input_name(o.in)));
  auto report = agdb::import_export(agentctx::io::default_file_system(), request, *bundle);
  if (!report) return report_error(report.error());

  if (o.json) {
    std::string out;
    agentctx::json::writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("path").value(report->path);
    w.key("target").value(agdb::layer_name(request.target));
    w.key("created").value(report->created);
    w.key("dry_run").value(report->dry_run);
    w.key("imported").value(std::uint64_t{report->imported});
    w.key("duplicates").value(std::uint64_t{report->duplicates});
    w.key("skipped_meta").value(std::uint64_t{report->skipped_meta});
    w.key("embedded").value(std::uint64_t{report->embedded});
    w.key("chunk_count").value(std::uint64_t{report->chunk_count});
    w.key("ids").begin_array();
    for (const auto& [from, to] : report->ids) w.begin_object().key("from").value(from).key("to").value(to).end_object();
    w.end_array();
    w.key("warnings").begin_array();
    for (const std::string& warning : report->warnings) w.value(warning);
    w.end_array();
    w.end_object();
    std::cout << out << '\n';
    return exit_ok;
  }
  print_warnings(report->warnings);
  std::cout << (report->dry_run ? "would import " : "imported ") << count_of(report->imported, "chunk") << " into the "
            << agdb::layer_name(request.target) << " layer (" << shown(report->path)
            << (report->created ? ", new file" : "");
  if (!report->dry_run) std::cout << ", " << count_of(report->chunk_count, "chunk");
  std::cout << "); " << count_of(report->duplicates, "duplicate") << " skipped, " << report->embedded
            << " embedded again";
  if (report->skipped_meta != 0) std::cout << ", " << report->skipped_meta << " meta.* skipped";
  std::cout << '\n';
  return exit_ok;
}

}  // namespace

void register_import(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<import_cli_options>();
  CLI::App* sub = app.add_subcommand("import", "Add the chunks of an export to the local, delta or user layer");
  sub->add_option("--in", opts->in, "The export: a JSON or NDJSON file, or - for standard input")->required();
  sub->add_option("--target", opts->target, "local, delta or user")->required();
  opts->files.add_options(*sub, " in --dir");
  sub->add_option("--dir", opts->dir, "Folder of the standard layer files (default: the current directory)");
  sub->add_flag("--preserve-ids", opts->preserve_ids,
                "Keep the exported ids (an id the target holds is an error) instead of fresh ones");
  sub->add_flag("--no-dedupe", opts->no_dedupe, "Import chunks whose content the target already has");
  sub->add_flag("--dry-run", opts->dry_run, "Report what would be imported; write nothing");
  add_embedder_options(*sub, opts->embedder);
  sub->add_flag("--json", opts->json, "Print the outcome as JSON");
  table.add(sub, [opts] { return run_import(*opts); });
}

}  // namespace agentsdb
