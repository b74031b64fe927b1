// agentsdb export: layers as an agentsdb.export.v1 document (JSON) or
// NDJSON records, e.g.
//   agentsdb export --layers user,delta --format ndjson --out context.ndjson
//   agentsdb export --redact embeddings > context.json
// The text is streamed (agdb::write_export); --out replaces the file
// atomically, so a failed export never leaves half a file behind.
#include <cstddef>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "agentctx/agdb/layer_export.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentsdb/command.hpp"
#include "common/output_file.hpp"
#include "agentsdb/layer_files.hpp"
#include "agentsdb/output.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;

struct export_cli_options {
  layer_files files;
  std::string dir;
  std::vector<std::string> layers;
  std::string format = "json";
  std::string redact = "none";
  std::optional<std::string> out;
};

int run_export(const export_cli_options& o) {
  agdb::export_options options;
  if (o.format == "json") {
    options.spelling = agdb::export_spelling::json;
  } else if (o.format == "ndjson") {
    options.spelling = agdb::export_spelling::ndjson;
  } else {
    return usage_error("--format must be json or ndjson, not '" + o.format + "'");
  }
  const auto redact = agdb::parse_redaction(o.redact);
  if (!redact) return usage_error("--redact must be none, content, embeddings or all, not '" + o.redact + "'");
  options.redact = *redact;
  std::optional<agentctx_cli::output_file> target;
  if (o.out) {
    auto checked = agentctx_cli::check_output_file(
        *o.out, agentctx_cli::output_option("--out", "leave out --out to write to standard output"));
    if (const std::string* refused = std::get_if<std::string>(&checked)) return usage_error(*refused);
    target = std::get<agentctx_cli::output_file>(std::move(checked));
  }
  agdb::layer_set wanted = o.layers.empty() ? agdb::layer_set::all() : agdb::layer_set{};
  for (const std::string& name : o.layers) {
    const auto layer = agdb::parse_layer_name(name);
    if (!layer) return usage_error("--layers takes base, user, delta and local, not '" + name + "'");
    wanted.add(*layer);
  }

  auto& fs = agentctx::io::default_file_system();
  std::vector<agdb::layer_reader> readers;
  std::vector<agdb::export_input> inputs;
  readers.reserve(agdb::layer_id_count);
  for (const agdb::layer_location& location : o.files.all_four(o.dir)) {
    if (!wanted.contains(location.id)) continue;
    auto present = fs.exists(location.path);
    if (!present) return report_error(present.error());
    if (!*present) {
      if (!o.files[location.id].empty()) return usage_error("--" + std::string(agdb::layer_name(location.id)) + " " + location.path + " does not exist");
      continue;  // a standard layer that is not there yet
    }
    auto reader = agdb::layer_reader::open(fs, location.path);
    if (!reader) return report_error(reader.error());
    readers.push_back(std::move(*reader));
    const std::string& path = location.path;
    const std::size_t slash = path.find_last_of('/');
    inputs.push_back({nullptr, slash == std::string::npos ? path : path.substr(slash + 1), location.id});
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) inputs[i].reader = &readers[i];
  if (inputs.empty()) {
    std::cerr << "agentsdb: none of the layers to export exists\n";
    return exit_failure;
  }

  std::size_t chunks = 0;
  for (const agdb::layer_reader& reader : readers) chunks += reader.chunk_count();
  if (!o.out) {
    auto written = agdb::write_export(inputs, options, [](std::string_view piece) -> agentctx::result<void> {
      if (std::fwrite(piece.data(), 1, piece.size(), stdout) != piece.size()) {
        return agentctx::fail(agentctx::errc::io_error, "cannot write to standard output");
      }
      return {};
    });
    if (!written) return report_error(written.error());
    if (std::fflush(stdout) != 0) return agentctx_cli::output_failure(program_name);
    return exit_ok;
  }
  auto writer = agentctx::io::atomic_file_writer::begin(fs, target->path);
  if (!writer) return report_error(writer.error());
  auto written = agdb::write_export(inputs, options, [&](std::string_view piece) {
    return writer->append(std::as_bytes(std::span(piece.data(), piece.size())));
  });
  if (!written) return report_error(written.error());
  if (auto committed = writer->commit(); !committed) return report_error(committed.error());
  agentctx_cli::restore_mode(*target);
  std::cout << "exported " << count_of(chunks, "chunk") << " from " << count_of(inputs.size(), "layer") << " to "
            << shown(*o.out) << '\n';
  return exit_ok;
}

}  // namespace

void register_export(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<export_cli_options>();
  CLI::App* sub = app.add_subcommand("export", "Write layers as agentsdb.export.v1 JSON or NDJSON");
  opts->files.add_options(*sub, " in --dir");
  sub->add_option("--dir", opts->dir, "Folder of the standard layer files (default: the current directory)");
  sub->add_option("--layers", opts->layers, "Which layers, e.g. user,delta (default: every one that exists)")
      ->delimiter(',');
  sub->add_option("--format", opts->format, "json (one document) or ndjson (one record per line)")
      ->capture_default_str();
  sub->add_option("--redact", opts->redact, "Leave out: none, content, embeddings or all")->capture_default_str();
  sub->add_option("--out", opts->out, "Write to this file, replaced atomically (default: standard output)");
  table.add(sub, [opts] { return run_export(*opts); });
}

}  // namespace agentsdb
