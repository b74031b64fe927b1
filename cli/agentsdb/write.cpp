// agentsdb write: an agent's write to the local or delta layer (seed 000
// section 11.1), e.g.
//   agentsdb write --scope local --content "The repo uses X for Y." --kind derived-summary
//                  --confidence 0.7 --source docs/ARCHITECTURE.md:12
// The chunk is appended by agdb::append_chunk (author mcp, a fresh id that no
// layer holds, embedded with the layers' embedder); the layer file is
// replaced atomically under a lock.
#include <charconv>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agentctx/agdb/layer_append.hpp"
#include "agentctx/agdb/layer_embedder.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"
#include "agentsdb/embedder_options.hpp"

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
  std::string files[agdb::layer_id_count];  // by layer_id value
  embedder_options embedder;
  bool json = false;
};

int usage_error(const std::string& message) {
  std::cerr << "agentsdb: " << message << '\n';
  return exit_usage;
}

// "1234" is a chunk id; anything else is a file:line string.
agdb::source_ref parse_source(const std::string& text) {
  std::uint32_t id = 0;
  const auto [end, problem] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (problem == std::errc{} && end == text.data() + text.size() && !text.empty()) return agdb::source_ref::to_chunk(id);
  return agdb::source_ref::to_string(text);
}

int run_write(const write_cli_options& o) {
  agdb::chunk_write w;
  const auto scope = agdb::parse_layer_name(o.scope);
  if (!scope) return usage_error("--scope must be local or delta, not '" + o.scope + "'");
  w.scope = *scope;
  if (o.content.has_value() == o.file.has_value()) return usage_error("give exactly one of --content TEXT and --file F");
  if (o.content) {
    w.content = *o.content;
  } else {
    std::ifstream in(*o.file, std::ios::binary);
    if (!in) return usage_error("cannot read " + *o.file);
    w.content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  w.kind = o.kind;
  if (!o.confidence) return usage_error("--confidence is required (a number from 0 to 1)");
  w.confidence = *o.confidence;
  for (const std::string& source : o.sources) w.sources.push_back(parse_source(source));
  if (auto checked = agdb::check_chunk_write(w); !checked) return usage_error(checked.error().message);

  std::vector<agdb::layer_location> locations = agdb::standard_layer_locations();
  for (agdb::layer_location& location : locations) {
    const std::string& given = o.files[static_cast<std::size_t>(location.id)];
    if (!given.empty()) location.path = given;
  }
  auto& fs = agentctx::io::default_file_system();
  auto configured = to_embedder_config(o.embedder);
  if (!configured) return usage_error(configured.error().message);
  auto stack = agdb::layer_stack::open(fs, locations);
  if (!stack) return report_error(stack.error());
  auto choice = agdb::embedder_config_for_layers(*stack, agdb::layer_set::all(), *configured);
  if (!choice) return report_error(choice.error());
  if (!o.json) {
    for (const std::string& warning : choice->warnings) std::cerr << "agentsdb: warning: " << warning << '\n';
  }
  auto embedder = agdb::make_embedder(choice->config, fs);
  if (!embedder) return report_error(embedder.error());
  auto written = agdb::append_chunk(fs, locations, w, **embedder);
  if (!written) return report_error(written.error());

  if (o.json) {
    std::string out;
    agentctx::json::writer j(out, agentctx::json::layout::pretty);
    j.begin_object();
    j.key("id").value(static_cast<std::uint64_t>(written->id));
    j.key("layer").value(agdb::layer_name(w.scope));
    j.key("path").value(written->path);
    j.key("created").value(written->created);
    j.key("chunks").value(static_cast<std::uint64_t>(written->chunk_count));
    j.key("warnings").begin_array();
    for (const std::string& warning : choice->warnings) j.value(warning);
    j.end_array();
    j.end_object();
    std::cout << out << '\n';
  } else {
    std::cout << "wrote chunk " << written->id << " to the " << agdb::layer_name(w.scope) << " layer ("
              << written->path << (written->created ? ", new file" : "") << ", " << written->chunk_count
              << " chunks)\n";
  }
  return exit_ok;
}

}  // namespace

void register_write(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<write_cli_options>();
  CLI::App* sub = app.add_subcommand("write", "Append an agent-written chunk to the local or delta layer");
  sub->add_option("--scope", opts->scope, "local or delta")->required();
  sub->add_option("--content", opts->content, "The chunk's text");
  sub->add_option("--file", opts->file, "Read the chunk's text from this file");
  sub->add_option("--kind", opts->kind, "The chunk's kind, e.g. derived-summary (not options, tombstone or meta.*)")
      ->required();
  sub->add_option("--confidence", opts->confidence, "How sure the agent is, from 0 to 1");
  sub->add_option("--source", opts->sources, "Provenance: a chunk id or file:line; repeatable");
  for (const agdb::layer_id layer : agdb::standard_layers) {
    const std::string name(agdb::layer_name(layer));
    sub->add_option("--" + name, opts->files[static_cast<std::size_t>(layer)],
                    "The " + name + " layer file (default " + std::string(agdb::standard_file_name(layer)) +
                        " in the current directory)");
  }
  add_embedder_options(*sub, opts->embedder);
  sub->add_flag("--json", opts->json, "Print the outcome as JSON");
  table.add(sub, [opts] { return run_write(*opts); });
}

}  // namespace agentsdb
