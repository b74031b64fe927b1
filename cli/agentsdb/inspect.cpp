// agentsdb inspect: header, sections, counts, kinds, authors, embedding schema
// and layer metadata of one layer; --list for a chunk table; --id N for one
// chunk in full. Text by default, --json for machines.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_summary.hpp"
#include "agentctx/agdb/provenance.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"
#include "agentsdb/layer_files.hpp"
#include "agentsdb/output.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;

struct inspect_options {
  std::string layer;
  std::optional<std::uint32_t> id;
  bool list = false;
  std::size_t limit = 0;  // 0: no limit
  layer_files files;      // the layers provenance is followed across
  bool json = false;
};

// The layers to follow provenance across, lowest precedence first: the
// standard files beside the inspected one (or those given), with the
// inspected file in its own slot when its name is a standard one, else on top.
struct provenance_layers {
  std::vector<agdb::layer_reader> readers;
  std::vector<agdb::provenance_layer> layers;
  std::size_t start = 0;
};

agentctx::result<provenance_layers> open_provenance_layers(const inspect_options& o, agdb::layer_reader inspected) {
  provenance_layers out;
  const std::filesystem::path path(o.layer);
  std::optional<agdb::layer_id> own;
  for (const agdb::layer_id layer : agdb::standard_layers) {
    if (path.filename() == agdb::standard_file_name(layer) && o.files[layer].empty()) own = layer;
  }
  out.readers.reserve(agdb::layer_id_count + 1);
  std::vector<agdb::layer_location> locations = o.files.all_four(path.parent_path().string());
  std::sort(locations.begin(), locations.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });  // lowest precedence first
  for (const agdb::layer_location& location : locations) {
    if (own == location.id) {
      out.start = out.readers.size();
      out.readers.push_back(std::move(inspected));
      out.layers.push_back({o.layer, nullptr});
      continue;
    }
    std::error_code ignored;
    if (!std::filesystem::exists(location.path) || std::filesystem::equivalent(location.path, path, ignored)) continue;
    auto reader = agdb::layer_reader::open(location.path);
    if (!reader) return agentctx::unexpected(std::move(reader).error());
    out.readers.push_back(std::move(*reader));
    out.layers.push_back({location.path, nullptr});
  }
  if (!own) {
    out.start = out.readers.size();
    out.readers.push_back(std::move(inspected));
    out.layers.push_back({o.layer, nullptr});
  }
  for (std::size_t i = 0; i < out.layers.size(); ++i) out.layers[i].reader = &out.readers[i];
  return out;
}

void write_provenance_json(agentctx::json::writer& w, const std::vector<agdb::provenance_step>& steps,
                           const provenance_layers& layers) {
  w.key("provenance").begin_array();
  for (const agdb::provenance_step& step : steps) {
    w.begin_object();
    w.key("depth").value(std::uint64_t{step.depth});
    w.key("id").value(std::uint64_t{step.id});
    w.key("layer");
    if (step.layer) {
      w.value(layers.layers[*step.layer].name);
      w.key("kind").value(step.kind);
      w.key("author").value(step.author);
      w.key("confidence").value(step.confidence);
      w.key("content").value(step.content);
      w.key("sources").begin_array();
      for (const agdb::source_ref& source : step.sources) w.value(source_text(source));
      w.end_array();
      w.key("repeated").value(step.repeated);
      w.key("depth_limit").value(step.depth_limit);
    } else {
      w.value(nullptr);
    }
    w.end_object();
  }
  w.end_array();
}

void print_provenance(const std::vector<agdb::provenance_step>& steps, const provenance_layers& layers) {
  std::cout << "provenance\n";
  for (const agdb::provenance_step& step : steps) {
    const std::string indent(2 + 4 * step.depth, ' ');
    std::cout << indent << (step.depth == 0 ? "" : "<- ") << "chunk " << step.id;
    if (!step.layer) {
      std::cout << ": not in any of the layers\n";
      continue;
    }
    std::cout << " in " << shown(layers.layers[*step.layer].name) << " (" << shown(step.kind) << ", "
              << shown(step.author) << ", "
              << step.confidence << "): " << preview(step.content, 60);
    if (step.repeated) std::cout << " (shown above)";
    if (step.depth_limit) std::cout << " (depth limit: not followed)";
    std::cout << '\n';
    if (step.repeated) continue;
    for (const agdb::source_ref& source : step.sources) {
      if (source.kind == agdb::relationship_kind::source_string) {
        std::cout << indent << "    <- " << shown(source.text) << '\n';
      }
    }
  }
}

void write_summary_json(agentctx::json::writer& w, const agdb::layer_summary& s) {
  w.key("file_size").value(s.file_size);
  w.key("version").value(std::to_string(s.header.version_major) + "." + std::to_string(s.header.version_minor));
  w.key("flags").value(s.header.flags);
  w.key("sections_offset").value(s.header.sections_offset);
  w.key("sections").begin_array();
  for (const auto& e : s.sections) {
    w.begin_object();
    w.key("kind").value(e.kind);
    w.key("name").value(agdb::section_kind_name(e.kind));
    w.key("offset").value(e.offset);
    w.key("length").value(e.length);
    w.end_object();
  }
  w.end_array();
  w.key("string_count").value(s.string_count);
  w.key("chunk_count").value(s.chunk_count);
  w.key("relationship_count").value(s.relationship_count);
  auto counts = [&](std::string_view key, const std::vector<agdb::name_count>& list) {
    w.key(key).begin_object();
    for (const auto& c : list) w.key(c.name).value(c.count);
    w.end_object();
  };
  counts("kinds", s.kinds);
  counts("authors", s.authors);
  w.key("embeddings").begin_object();
  w.key("row_count").value(s.embeddings.row_count);
  w.key("dim").value(s.embeddings.dim);
  w.key("element_type").value(agdb::element_type_name(s.embeddings.element_type));
  w.key("quant_scale").value(static_cast<double>(s.embeddings.quant_scale));
  w.key("data_offset").value(s.embeddings.data_offset);
  w.key("data_length").value(s.embeddings.data_length);
  w.end_object();
  w.key("metadata");
  if (s.metadata_json) {
    write_json_or_string(w, *s.metadata_json);
  } else {
    w.value(nullptr);
  }
  w.key("embedding_profile");
  if (s.profile) {
    agdb::write_embedding_profile(w, *s.profile);
  } else {
    w.value(nullptr);
  }
  if (s.chunk_count != 0) {
    w.key("created_at_min").value(agentctx::format_rfc3339_utc_ms(s.created_min_unix_ms));
    w.key("created_at_max").value(agentctx::format_rfc3339_utc_ms(s.created_max_unix_ms));
  }
}

void print_summary_text(const agdb::layer_summary& s, const std::string& path) {
  std::cout << "layer          " << shown(path) << '\n';
  std::cout << "file           " << s.file_size << " bytes, AGDB v" << s.header.version_major << '.'
            << s.header.version_minor << ", flags " << s.header.flags << '\n';
  std::cout << "sections       " << s.sections.size() << " (table at byte " << s.header.sections_offset << ")\n";
  std::printf("  %-14s %6s %14s %14s\n", "name", "kind", "offset", "length");
  std::fflush(stdout);
  for (const auto& e : s.sections) {
    std::printf("  %-14s %6u %14llu %14llu\n", std::string(agdb::section_kind_name(e.kind)).c_str(), e.kind,
                static_cast<unsigned long long>(e.offset), static_cast<unsigned long long>(e.length));
  }
  std::fflush(stdout);
  std::cout << "strings        " << s.string_count << '\n';
  std::cout << "chunks         " << s.chunk_count << '\n';
  std::cout << "relationships  " << s.relationship_count << '\n';
  std::cout << "kinds          " << join_counts(s.kinds) << '\n';
  std::cout << "authors        " << join_counts(s.authors) << '\n';
  std::cout << "embeddings     " << s.embeddings.row_count << " rows x " << s.embeddings.dim << " dims, "
            << agdb::element_type_name(s.embeddings.element_type) << ", scale " << s.embeddings.quant_scale
            << ", data at byte " << s.embeddings.data_offset << " (" << s.embeddings.data_length << " bytes)\n";
  std::cout << "profile        ";
  if (s.profile) {
    std::cout << shown(agdb::describe(*s.profile)) << '\n';
  } else if (!s.profile_error.empty()) {
    std::cout << "unreadable (" << agentctx::printable_line(s.profile_error) << ")\n";
  } else {
    std::cout << "none recorded (no layer metadata)\n";
  }
  if (s.metadata_json) std::cout << "metadata       " << agentctx::printable_line(*s.metadata_json) << '\n';
  if (s.chunk_count != 0 && s.created_max_unix_ms == 0) {
    std::cout << "created        no timestamps (all 0: a reproducible build)\n";
  } else if (s.chunk_count != 0) {
    std::cout << "created        " << agentctx::format_rfc3339_utc_ms(s.created_min_unix_ms) << " .. "
              << agentctx::format_rfc3339_utc_ms(s.created_max_unix_ms) << '\n';
  }
}

int list_chunks(const agdb::layer_reader& reader, const inspect_options& o, agentctx::json::writer* w) {
  const std::size_t n = o.limit == 0 ? reader.chunk_count() : std::min(o.limit, reader.chunk_count());
  if (w != nullptr) {
    w->key("chunks").begin_array();
  } else {
    std::printf("\n%10s  %-16s %-6s %5s  %-28s %s\n", "id", "kind", "author", "conf", "first source", "content");
    std::fflush(stdout);
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto view = reader.chunk(i);
    if (!view) return report_error(std::move(view).error());
    auto sources = reader.sources(*view);
    if (!sources) return report_error(std::move(sources).error());
    if (w != nullptr) {
      write_chunk_json(*w, *view, *sources, std::nullopt);
    } else {
      const std::string first = sources->empty() ? "-" : fit_column(describe_source(sources->front()), 28);
      std::printf("%10u  %-16s %-6s %5.2f  %-28s %s\n", view->id, fit_column(shown(view->kind), 16).c_str(),
                  shown(view->author).c_str(), static_cast<double>(view->confidence), first.c_str(),
                  preview(view->content, 60).c_str());
    }
  }
  if (w != nullptr) {
    w->end_array();
  } else {
    std::fflush(stdout);
    if (n < reader.chunk_count()) std::cout << "... " << (reader.chunk_count() - n) << " more (--limit)\n";
  }
  return exit_ok;
}

int show_chunk(agdb::layer_reader reader_in, const inspect_options& o) {
  auto layers = open_provenance_layers(o, std::move(reader_in));
  if (!layers) return report_error(layers.error());
  const agdb::layer_reader& reader = layers->readers[layers->start];
  auto details = agdb::describe_chunk(reader, *o.id);
  if (!details) return report_error(std::move(details).error());
  auto chain = agdb::provenance_chain(layers->layers, layers->start, *o.id);
  if (!chain) return report_error(chain.error());
  const auto& c = details->chunk;
  if (o.json) {
    std::string out;
    agentctx::json::writer w(out, agentctx::json::layout::pretty);
    write_chunk_json(w, c, details->sources, details->embedding_norm, [&] { write_provenance_json(w, *chain, *layers); });
    std::cout << out << '\n';
    return exit_ok;
  }
  std::cout << "id             " << c.id << '\n';
  std::cout << "kind           " << shown(c.kind) << '\n';
  std::cout << "author         " << shown(c.author) << '\n';
  std::cout << "confidence     " << c.confidence << '\n';
  std::cout << "created_at     " << agentctx::format_rfc3339_utc_ms(c.created_at_unix_ms) << " ("
            << c.created_at_unix_ms << " ms)\n";
  std::cout << "sources        ";
  if (details->sources.empty()) std::cout << "(none)\n";
  for (std::size_t i = 0; i < details->sources.size(); ++i) {
    if (i != 0) std::cout << "               ";
    std::cout << describe_source(details->sources[i]) << '\n';
  }
  std::cout << "embedding      row " << c.embedding_row << ", L2 norm " << details->embedding_norm << '\n';
  std::cout << "record         at byte " << c.record_offset << '\n';
  std::cout << "content        " << c.content.size() << " bytes\n";
  std::cout << "----\n" << agentctx::printable_text(c.content);
  if (c.content.empty() || c.content.back() != '\n') std::cout << '\n';
  std::cout << "----\n";
  print_provenance(*chain, *layers);
  return exit_ok;
}

int run_inspect(const inspect_options& o) {
  auto reader = agdb::layer_reader::open(o.layer);
  if (!reader) return report_error(std::move(reader).error());
  if (o.id) return show_chunk(std::move(*reader), o);
  auto summary = agdb::summarize_layer(*reader);
  if (!summary) return report_error(std::move(summary).error());
  if (!o.json) {
    print_summary_text(*summary, o.layer);
    return o.list ? list_chunks(*reader, o, nullptr) : exit_ok;
  }
  std::string out;
  agentctx::json::writer w(out, agentctx::json::layout::pretty);
  w.begin_object();
  w.key("path").value(o.layer);
  write_summary_json(w, *summary);
  if (o.list) {
    if (int rc = list_chunks(*reader, o, &w); rc != exit_ok) return rc;
  }
  w.end_object();
  std::cout << out << '\n';
  return exit_ok;
}

}  // namespace

void register_inspect(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<inspect_options>();
  CLI::App* sub = app.add_subcommand("inspect", "Show the header, sections, counts and metadata of a layer, or one chunk");
  auto* layer_flag = sub->add_option("--layer", opts->layer, "Layer file (AGENTS.db, AGENTS.delta.db, ...)");
  auto* layer_pos = sub->add_option("file", opts->layer, "Layer file (same as --layer)");
  layer_flag->excludes(layer_pos);
  layer_pos->excludes(layer_flag);
  sub->add_option("--id", opts->id, "Print the chunk with this id in full")
      ->check(agentctx_cli::count_between(0, UINT32_MAX));
  opts->files.add_options(*sub, " beside the inspected file; with --id, provenance is followed across them");
  sub->add_flag("--list", opts->list, "Also list the chunks (id, kind, author, confidence, source, preview)");
  sub->add_option("--limit", opts->limit, "With --list: at most this many chunks (0 = all)")
      ->check(agentctx_cli::count_between(0, UINT64_MAX));
  sub->add_flag("--json", opts->json, "Machine-readable JSON output");
  sub->callback([opts, layer_flag, layer_pos] {
    if (layer_flag->count() == 0 && layer_pos->count() == 0) throw CLI::RequiredError("--layer or FILE");
  });
  table.add(sub, [opts] { return run_inspect(*opts); });
}

}  // namespace agentsdb
