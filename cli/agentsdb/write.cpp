// agentsdb write: an agent's write to the local or delta layer (seed 000
// section 11.1), e.g.
//   agentsdb write --scope local --content "The repo uses X for Y." --kind derived-summary
//                  --confidence 0.7 --source docs/ARCHITECTURE.md:12
// The chunk is appended by agdb::append_chunk (author mcp, a fresh id that no
// layer holds, embedded with the layers' embedder); the layer file is
// replaced atomically under a lock.
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agentctx/agdb/json_output.hpp"
#include "agentctx/agdb/layer_append.hpp"
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

struct write_cli_options {
  std::string scope;
  std::optional<std::string> content;
  std::optional<std::string> file;
  std::string kind;
  std::optional<float> confidence;
  std::vector<std::string> sources;
  layer_files files;
  agentctx_cli::embedder_options embedder;
  bool json = false;
};

int run_write(const write_cli_options& o) {
  agdb::chunk_write w;
  const auto scope = agdb::parse_layer_name(o.scope);
  if (!scope) return usage_error("--scope must be local or delta, not '" + o.scope + "'");
  w.scope = *scope;
  if (o.content.has_value() == o.file.has_value()) return usage_error("give exactly one of --content TEXT and --file F");
  if (o.content) {
    w.content = *o.content;
  } else {
    auto text = agentctx_cli::read_input(*o.file);
    if (!text) return report_error(text.error());
    w.content = std::move(*text);
  }
  w.kind = o.kind;
  if (!o.confidence) return usage_error("--confidence is required (a number from 0 to 1)");
  w.confidence = *o.confidence;
  for (const std::string& source : o.sources) w.sources.push_back(agdb::source_ref::parse(source));
  if (auto checked = agdb::check_chunk_write(w); !checked) return usage_error(checked.error().message);

  const std::vector<agdb::layer_location> locations = o.files.all_four();
  auto& fs = agentctx::io::default_file_system();
  auto configured = to_embedder_config(o.embedder);
  if (!configured) return usage_error(configured.error().message);
  auto written = agdb::append_chunk(fs, locations, w, *configured);
  if (!written) return report_error(written.error());
  if (!o.json) print_warnings(written->warnings);

  if (o.json) {
    std::string out;
    agentctx::json::writer j(out, agentctx::json::layout::pretty);
    j.begin_object();
    j.key("id").value(static_cast<std::uint64_t>(written->id));
    agdb::write_outcome_members(j, *written, w.scope);
    j.end_object();
    std::cout << out << '\n';
  } else {
    std::cout << "wrote chunk " << written->id << " to the " << agdb::layer_name(w.scope) << " layer ("
              << shown(written->path) << (written->created ? ", new file" : "") << ", "
              << count_of(written->chunk_count, "chunk") << ")\n";
  }
  return exit_ok;
}

}  // namespace

void register_write(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<write_cli_options>();
  CLI::App* sub = app.add_subcommand("write", "Append an agent-written chunk to the local or delta layer");
  sub->add_option("--scope", opts->scope, "local or delta")->required();
  sub->add_option("--content", opts->content, "The chunk's text");
  sub->add_option("--file", opts->file, "Read the chunk's text from this file (- for standard input)");
  sub->add_option("--kind", opts->kind, "The chunk's kind, e.g. derived-summary (not options, tombstone or meta.*)")
      ->required();
  sub->add_option("--confidence", opts->confidence, "How sure the agent is, from 0 to 1");
  sub->add_option("--source", opts->sources, "Provenance: a chunk id or file:line; repeatable");
  opts->files.add_options(*sub);
  add_embedder_options(*sub, opts->embedder);
  sub->add_flag("--json", opts->json, "Print the outcome as JSON");
  table.add(sub, [opts] { return run_write(*opts); });
}

}  // namespace agentsdb
