// agentsdb compile: turns documentation into an immutable base layer (seed 000
// section 15.1), e.g.
//   agentsdb compile --root . --include 'AGENTS.md' --out AGENTS.db
// The output is byte-identical for the same inputs on every machine and is
// put in place atomically; an existing file is never modified in place.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <variant>
#include <vector>

#include "agentctx/agdb/embedder_config.hpp"
#include "agentctx/agdb/layer_compiler.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"
#include "common/embedder_options.hpp"
#include "common/output_file.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;

struct compile_cli_options {
  agdb::compile_options library;
  std::string out;
  std::string element_type = "f32";
  agentctx_cli::embedder_options embedder;
  bool json = false;
  bool quiet = false;
};

// A progress line on stderr, only when a person is watching and the corpus is
// large enough for it to matter; redrawn at most every 100 ms.
class progress_line {
 public:
  explicit progress_line(bool enabled) : enabled_(enabled) {}
  void update(std::size_t done, std::size_t total, std::uint64_t bytes) {
    if (!enabled_ || total < 200) return;
    const auto now = std::chrono::steady_clock::now();
    if (done != total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    std::fprintf(stderr, "\rcompile: %zu/%zu files, %.1f MB", done, total, static_cast<double>(bytes) / 1e6);
    std::fflush(stderr);
  }
  ~progress_line() {
    if (drawn_) std::fputc('\n', stderr);
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

int run_compile(compile_cli_options& o) {
  if (o.element_type == "f32") {
    o.library.element = agdb::element_type::f32;
  } else if (o.element_type == "i8") {
    o.library.element = agdb::element_type::i8;
  } else {
    return usage_error("--element-type must be f32 or i8, not '" + o.element_type + "'");
  }
  if (o.library.includes.empty() && o.library.texts.empty()) {
    return usage_error("nothing to compile: give --include GLOB or --text TEXT");
  }
  auto checked = agentctx_cli::check_output_file(o.out, agentctx_cli::output_option("--out"));
  if (const std::string* refused = std::get_if<std::string>(&checked)) return usage_error(*refused);
  const agentctx_cli::output_file target = std::get<agentctx_cli::output_file>(std::move(checked));
  o.library.tool_name = "agentsdb";
  o.library.tool_version = "0.1.0";

  auto configured = to_embedder_config(o.embedder);
  if (!configured) return report_error(std::move(configured).error());
  const agdb::embedder_config config = configured->value_or(agdb::hash_config(agdb::hash_embedder::default_dim));
  auto made = agdb::make_embedder(config, agentctx::io::default_file_system());
  if (!made) return report_error(std::move(made).error());
  agdb::embedder& embedder = **made;

  agentctx::result<agdb::compile_summary> summary = [&] {
    progress_line progress(!o.quiet && ::isatty(STDOUT_FILENO) && ::isatty(STDERR_FILENO));
    return agdb::compile_layer(agentctx::io::default_file_system(), o.library, embedder, target.path,
                               [&](std::size_t done, std::size_t total, std::uint64_t bytes) {
                                 progress.update(done, total, bytes);
                               });
  }();
  if (!summary) return report_error(std::move(summary).error());
  agentctx_cli::restore_mode(target);
  const auto& s = *summary;
  for (const auto& skipped : s.skipped) {
    std::cerr << "agentsdb: warning: skipped " << agentctx::escape_for_message(skipped.path, SIZE_MAX) << ": "
              << agentctx::printable_line(skipped.reason) << '\n';
  }
  const double seconds = std::chrono::duration<double>(s.elapsed).count();
  const double mb_per_s = seconds > 0 ? static_cast<double>(s.input_bytes) / 1e6 / seconds : 0.0;
  if (o.json) {
    std::string out;
    agentctx::json::writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("out").value(o.out);
    w.key("files").value(s.files);
    w.key("skipped").begin_array();
    for (const auto& skipped : s.skipped) {
      w.begin_object().key("path").value(skipped.path).key("reason").value(skipped.reason).end_object();
    }
    w.end_array();
    w.key("chunks").value(s.chunks);
    w.key("input_bytes").value(s.input_bytes);
    w.key("output_bytes").value(s.output_bytes);
    w.key("element_type").value(o.element_type);
    w.key("embedding_profile").value(agdb::describe(embedder.profile()));
    w.key("seconds").value(seconds);
    w.end_object();
    std::cout << out << '\n';
  } else if (!o.quiet) {
    std::printf("compiled %zu files (%zu skipped) into %zu chunks: %llu bytes in, %llu bytes out, "
                "%.3f s (%.1f MB/s) -> %s\n",
                s.files, s.skipped.size(), s.chunks, static_cast<unsigned long long>(s.input_bytes),
                static_cast<unsigned long long>(s.output_bytes), seconds, mb_per_s, shown(o.out).c_str());
  }
  return exit_ok;
}

}  // namespace

void register_compile(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<compile_cli_options>();
  CLI::App* sub = app.add_subcommand("compile", "Compile documentation into an immutable AGENTS.db base layer");
  sub->add_option("--root", opts->library.root, "Directory the globs and chunk sources are relative to")
      ->capture_default_str();
  sub->add_option("--include", opts->library.includes, "Glob of files to compile, relative to --root ('**' spans folders); repeatable");
  sub->add_option("--exclude", opts->library.excludes, "Glob of files or folders to leave out; repeatable");
  sub->add_option("--text", opts->library.texts, "Inline markdown to compile as well; repeatable");
  sub->add_option("--kind", opts->library.kind, "Kind of every chunk")->capture_default_str();
  sub->add_option("--out", opts->out, "Output layer file (replaced atomically)")->required();
  sub->add_option("--element-type", opts->element_type, "Embedding storage: f32, or i8 with a scale computed from the data")
      ->capture_default_str();
  sub->add_option("--max-chunk-bytes", opts->library.chunking.max_chunk_bytes, "Largest chunk in bytes")
      ->capture_default_str()
      ->check(positive_count);
  add_embedder_options(*sub, opts->embedder);
  sub->add_flag("--json", opts->json, "Print a JSON summary (files, chunks, bytes, time)");
  sub->add_flag("-q,--quiet", opts->quiet, "Print nothing but warnings and errors");
  table.add(sub, [opts] { return run_compile(*opts); });
}

}  // namespace agentsdb
