// agentsdb search: queries the union of the standard layers (seed 000
// sections 6 and 10.1), e.g.
//   agentsdb search --query "how do releases work" -k 5
//   agentsdb search --base AGENTS.db --delta AGENTS.delta.db --query-vec '[0.1, ...]' --json
// The query text is embedded with the embedder the layers record (or the one
// configured with --embedder); --query-vec searches with a given vector.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agentctx/agdb/layer_embedder.hpp"
#include "agentctx/agdb/layer_search.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/f32_array.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"
#include "agentsdb/layer_files.hpp"
#include "agentsdb/output.hpp"
#include "common/embedder_options.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;

struct search_cli_options {
  std::optional<std::string> query;
  std::optional<std::string> query_vec;
  std::size_t k = 10;
  std::vector<std::string> kinds;
  std::vector<std::string> layers;
  layer_files files;
  std::string mode = "vector";
  std::string metric = "cosine";
  unsigned threads = 0;  // 0: the machine's cores
  std::size_t preview_chars = 120;
  agentctx_cli::embedder_options embedder;
  bool json = false;
};

agentctx::result<std::vector<float>> embed_query(const agdb::layer_stack& stack, agdb::layer_set selected,
                                                 const search_cli_options& o, std::vector<std::string>& warnings) {
  auto configured = to_embedder_config(o.embedder);
  if (!configured) return agentctx::unexpected(std::move(configured).error());
  auto choice = agdb::embedder_config_for_layers(stack, selected, *configured);
  if (!choice) return agentctx::unexpected(std::move(choice).error());
  warnings.insert(warnings.end(), choice->warnings.begin(), choice->warnings.end());
  auto embedder = agdb::make_embedder(choice->config, agentctx::io::default_file_system());
  if (!embedder) return agentctx::unexpected(std::move(embedder).error());
  std::vector<float> vector(choice->config.profile.dim);
  const std::string_view text = *o.query;
  AGENTCTX_TRY((*embedder)->embed(std::span(&text, 1), vector));
  return vector;
}

void write_results_json(const search_cli_options& o, const agdb::layer_stack& stack, agdb::layer_set selected,
                        const std::vector<std::string>& warnings, const std::vector<agdb::search_hit>& hits) {
  std::string out;
  agentctx::json::writer w(out, agentctx::json::layout::pretty);
  w.begin_object();
  w.key("query");
  if (o.query) {
    w.value(*o.query);
  } else {
    w.value(nullptr);
  }
  w.key("mode").value(o.mode);
  w.key("metric").value(o.metric);
  w.key("k").value(static_cast<std::uint64_t>(o.k));
  w.key("layers");
  agdb::write_searched_layers(w, stack, selected);
  w.key("warnings").begin_array();
  for (const std::string& warning : warnings) w.value(warning);
  w.end_array();
  w.key("results").begin_array();
  std::size_t rank = 0;
  for (const agdb::search_hit& hit : hits) {
    w.begin_object();
    w.key("rank").value(static_cast<std::uint64_t>(++rank));
    w.key("layer").value(agdb::layer_name(hit.layer));
    w.key("score").value(hit.score);
    w.key("vector_score").value(hit.vector_score);
    w.key("lexical_score");
    if (hit.lexical_score) {
      w.value(*hit.lexical_score);
    } else {
      w.value(nullptr);
    }
    w.key("chunk");
    write_chunk_json(w, hit.chunk, hit.sources, std::nullopt);
    w.key("conflicts");
    agdb::write_conflicts(w, hit.conflicts);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  std::cout << out << '\n';
}

void print_results(const search_cli_options& o, const std::vector<agdb::search_hit>& hits) {
  if (hits.empty()) {
    std::cout << "no results\n";
    return;
  }
  std::size_t rank = 0;
  for (const agdb::search_hit& hit : hits) {
    const auto& c = hit.chunk;
    std::printf("%zu. [%s] id %u  score %.4f", ++rank, std::string(agdb::layer_name(hit.layer)).c_str(), c.id,
                hit.score);
    if (hit.lexical_score) std::printf(" (vector %.4f, bm25 %.3f)", hit.vector_score, *hit.lexical_score);
    std::printf("  %s  %s  confidence %.2f\n", shown(c.kind).c_str(), shown(c.author).c_str(),
                static_cast<double>(c.confidence));
    if (!hit.sources.empty()) {
      std::string sources;
      for (const auto& s : hit.sources) {
        if (!sources.empty()) sources += ", ";
        sources += describe_source(s);
      }
      std::printf("   sources: %s\n", sources.c_str());
    }
    std::printf("   %s\n", preview(c.content, o.preview_chars).c_str());
    for (const agdb::overridden_copy& copy : hit.conflicts) {
      std::printf("   conflict: overrides a different %s copy (content sha256 %s)\n",
                  std::string(agdb::layer_name(copy.layer)).c_str(), copy.content_sha256.substr(0, 16).c_str());
    }
  }
}

int run_search(const search_cli_options& o) {
  if (!o.query && !o.query_vec) return usage_error("give --query TEXT or --query-vec JSON");
  if (o.query && o.query->empty()) return usage_error("--query must not be empty");
  agdb::search_request request;
  request.k = o.k;
  if (o.mode == "hybrid") {
    if (!o.query) return usage_error("--mode hybrid needs --query (the text it ranks contents against)");
    request.mode = agdb::search_mode::hybrid;
  } else if (o.mode != "vector") {
    return usage_error("--mode must be vector or hybrid, not '" + o.mode + "'");
  }
  if (o.metric == "dot") {
    request.metric = agdb::similarity_metric::dot;
  } else if (o.metric != "cosine") {
    return usage_error("--metric must be cosine or dot, not '" + o.metric + "'");
  }
  agdb::layer_set wanted;
  for (const std::string& name : o.layers) {
    const auto layer = agdb::parse_layer_name(name);
    if (!layer) return usage_error("--layers: unknown layer '" + name + "' (use base, user, delta, local)");
    wanted.add(*layer);
  }
  if (o.layers.empty()) wanted = agdb::layer_set::all();
  request.layers = wanted;
  request.kinds = agdb::kind_filter(o.kinds);
  request.threads = o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());

  auto stack = agdb::layer_stack::open(agentctx::io::default_file_system(), o.files.given_or_standard());
  if (!stack) return report_error(stack.error());
  const agdb::layer_set selected = stack->present(wanted);
  if (selected.empty()) {
    std::string looked;
    for (const auto& location : o.files.given_or_standard()) {
      if (wanted.contains(location.id)) looked += (looked.empty() ? "" : ", ") + location.path;
    }
    std::cerr << "agentsdb: no layer to search: none of " << (looked.empty() ? "the selected layers" : looked)
              << " exists\n";
    return exit_failure;
  }

  std::vector<std::string> warnings;
  std::vector<float> query_vector;
  if (o.query_vec) {
    auto parsed = agentctx::json::parse_f32_array(*o.query_vec);
    if (!parsed) return usage_error("--query-vec: " + parsed.error().message);
    query_vector = std::move(*parsed);
  } else {
    auto embedded = embed_query(*stack, selected, o, warnings);
    if (!embedded) return report_error(embedded.error());
    query_vector = std::move(*embedded);
  }
  if (o.query) request.query_text = *o.query;
  request.query_vector = query_vector;
  if (!o.json) {
    print_warnings(warnings);
  }

  agdb::layer_searcher searcher(*stack);
  auto hits = searcher.search(request);
  if (!hits) return report_error(hits.error());
  if (o.json) {
    write_results_json(o, *stack, selected, warnings, *hits);
  } else {
    print_results(o, *hits);
  }
  return exit_ok;
}

}  // namespace

void register_search(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<search_cli_options>();
  CLI::App* sub = app.add_subcommand("search", "Search the union of the layers, higher layers overriding lower ones");
  sub->add_option("--query", opts->query,
                  "Text to search for, embedded with the layers' embedder (and ranked by BM25 in hybrid mode)");
  sub->add_option("--query-vec", opts->query_vec, "Search with this vector: a JSON array of numbers");
  sub->add_option("-k", opts->k, "Number of results")->capture_default_str()->check(positive_count);
  sub->add_option("--kind", opts->kinds,
                  "Only chunks of this kind; repeatable ('meta.*' for all meta kinds). Default: all but "
                  "options, tombstone and meta.*");
  sub->add_option("--layers", opts->layers, "Layers to search, comma-separated (default base,user,delta,local)")
      ->delimiter(',');
  opts->files.add_options(*sub, " in the current directory, when no layer file is given");
  sub->add_option("--mode", opts->mode, "vector, or hybrid (vector and BM25 fused by reciprocal rank)")
      ->capture_default_str();
  sub->add_option("--metric", opts->metric, "cosine or dot")->capture_default_str();
  sub->add_option("--threads", opts->threads, "Threads for large layers, 1 to 1024 (default: all cores)")
      ->check(agentctx_cli::positive_count_at_most(agentctx_cli::max_threads));
  sub->add_option("--preview", opts->preview_chars, "Characters of content to show per result")
      ->capture_default_str()
      ->check(positive_count);
  add_embedder_options(*sub, opts->embedder);
  sub->add_flag("--json", opts->json, "Print the results as JSON");
  table.add(sub, [opts] { return run_search(*opts); });
}

}  // namespace agentsdb
