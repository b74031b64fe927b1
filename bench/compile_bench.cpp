// bench/compile_bench.cpp: how fast markdown compiles into an AGDB layer, next
// to the cost of merely reading the same files, measured in the same run.
//
// The program writes a synthetic markdown corpus (by default 64 MB in about
// 3,000 files below nested directories: headings of every level, setext
// headings, paragraphs, lists, block quotes, fenced code, YAML front matter,
// non-ASCII words, CRLF files, long sections and paragraphs, oversized fences
// and single lines longer than a chunk, so that every splitting rule runs;
// plus a few binary and non-UTF-8 ".md" files the compile must skip and some
// files the include glob leaves out; the same bytes every run) into a fresh
// directory made by mkdtemp under $TMPDIR (or /tmp), removed when the program
// ends (also on errors; not when it is killed). It then prints:
//
//   compile   compile_layer() of "**/*.md" with the hash embedder, end to end
//             (collect, read, chunk, ids, embed, write with fdatasync and
//             rename), wall clock, median of the runs, as megabytes of
//             compiled markdown per second (1 MB = 10^6 bytes), for
//             dim 128 f32 (the goal figure), dim 128 i8 and dim 384 f32.
//             Baseline: reading every matched file into memory, cat-like
//             (open + read() into one buffer + close), on the same warm page
//             cache. Goal: at least 50 MB/s for dim 128 f32.
//
// A "phases" section follows: the same work as one compile at dim 128 f32,
// done step by step with the library's parts on one thread, each timed
// alone, so the report shows where the time goes: collect (collect_sources),
// read and chunk (read, binary/UTF-8 check, chunk_markdown), ids (SHA-256 of
// every chunk), embed (hash_embedder), write (write_layer). Their sum can
// exceed the end-to-end time: compile_layer spreads chunking, ids and
// embedding over the machine's cores. CPU time is printed next to wall time
// (on a busy machine wall time includes waiting for a CPU).
//
// Every compile of one configuration must write the same bytes (the program
// compares the digests); a MISS of the goal does not change the exit status:
// the program exits 1 only on an error and 2 on bad usage.
//
// Run it from an optimised build (an unoptimised build says so in its output):
//   cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release
//   cmake --build build-release --target compile_bench
//   build-release/bench/compile_bench                  # 64 MB, 3 runs each
//   build-release/bench/compile_bench --megabytes 200 --runs 5
//   build-release/bench/compile_bench --small          # CI smoke: 1 MB, 1 run
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_compiler.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/io/posix_file_system.hpp"

#include "bench_support.hpp"

namespace {

using agentctx_bench::elapsed;
using agentctx_bench::format;
using agentctx_bench::megabytes;
using agentctx_bench::print_machine_note;
using agentctx_bench::random_source;
using agentctx_bench::scratch_directory;
using agentctx_bench::stopwatch;
using agentctx_bench::system_failure;
using agentctx_bench::verdict;

namespace agdb = agentctx::agdb;
namespace io = agentctx::io;
using agentctx::errc;
using agentctx::result;
using agentctx::unexpected;

constexpr double compile_goal_mb_per_s = 50.0;

constexpr const char* usage =
    "usage: compile_bench [--small] [--megabytes N] [--runs N]\n"
    "  Writes a synthetic markdown corpus of N MB (default 64) in a temporary directory\n"
    "  under $TMPDIR or /tmp, compiles it into AGDB layers with the hash embedder and\n"
    "  prints MB/s next to the speed of reading the same files, measured in the same run.\n"
    "  --small        1 MB corpus, every measurement once: a smoke test\n"
    "  --megabytes N  corpus size in MB (at least 1)\n"
    "  --runs N       compiles per configuration, the median is shown (default 3)\n";

struct options {
  std::uint64_t corpus_bytes = 64'000'000;
  int runs = 3;
  bool small = false;
};

// ---- command line -------------------------------------------------------------

/// Parses argv; nullopt after printing usage (with `exit_code` set).
std::optional<options> parse_options(int argc, char** argv, int& exit_code) {
  options o;
  std::optional<std::uint64_t> megabytes;
  std::optional<std::uint64_t> runs;
  agentctx_bench::bench_arguments args("compile_bench", usage);
  args.flag("--small", o.small).number("--megabytes", megabytes, 1, 100'000).number("--runs", runs, 1, 100);
  if (const auto code = args.read(argc, argv)) {
    exit_code = *code;
    return std::nullopt;
  }
  if (o.small) {
    o.corpus_bytes = 1'000'000;
    o.runs = 1;
  }
  if (megabytes) o.corpus_bytes = *megabytes * 1'000'000;
  if (runs) o.runs = static_cast<int>(*runs);
  return o;
}

// ---- synthetic corpus -----------------------------------------------------------

constexpr std::string_view words[] = {
    "the",     "agent",    "context",   "layer",    "chunk",    "build",    "test",      "run",
    "before",  "after",    "commit",    "review",   "always",   "never",    "must",      "should",
    "file",    "directory", "config",   "option",   "default",  "value",    "error",     "returns",
    "when",    "with",     "from",      "into",     "every",    "section",  "module",    "package",
    "server",  "client",   "request",   "response", "timeout",  "retry",    "cache",     "index",
    "query",   "schema",   "migration", "deploy",   "release",  "version",  "branch",    "merge",
    "a",       "an",       "is",        "are",      "of",       "to",       "in",        "on",
    "and",     "or",       "not",       "it",       "this",     "that",     "for",       "by",
    "use",     "prefer",   "avoid",     "keep",     "check",    "format",   "lint",      "style",
    "function", "class",   "method",    "field",    "struct",   "type",     "interface", "trait",
};
// Non-ASCII words keep UTF-8 paths (and the embedder's multi-byte spaces) busy now and then.
constexpr std::string_view rare_words[] = {"caf\xc3\xa9", "na\xc3\xafve", "\xe2\x86\x92", "Z\xc3\xbcrich",
                                           "\xc2\xb5s",   "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                                           "a\xc2\xa0" "b", "x\xe2\x80\x83y"};
constexpr std::string_view areas[] = {"docs", "src", "services", "design", "notes", "tools", "ops", "guides"};
constexpr std::string_view code_lines[] = {
    "for (auto& item : items) total += item.size();", "if err != nil { return fmt.Errorf(\"load: %w\", err) }",
    "let config = Config::from_env()?;",               "def handler(event, context):",
    "    return {\"status\": 200, \"body\": body}",     "cmake --build build --target all -j2",
    "SELECT id, name FROM users WHERE active = 1;",    "const result = await fetch(url, { method: 'POST' });",
};

class markdown_generator {
 public:
  explicit markdown_generator(std::uint64_t seed) : random_(seed) {}

  /// One document of roughly `target` bytes.
  std::string document(std::size_t target) {
    out_.clear();
    if (random_.one_in(8)) front_matter();
    heading(1);
    while (out_.size() < target) block();
    return out_;
  }

  std::size_t below(std::size_t n) { return random_.below(n); }

 private:
  void word(bool capitalised) {
    const std::size_t at = out_.size();
    if (random_.one_in(50)) {
      out_ += rare_words[random_.below(std::size(rare_words))];
    } else if (random_.one_in(30)) {
      out_ += '`';
      out_ += words[random_.below(std::size(words))];
      out_ += "_";
      out_ += words[random_.below(std::size(words))];
      out_ += "()`";
    } else {
      out_ += words[random_.below(std::size(words))];
    }
    if (capitalised && out_[at] >= 'a' && out_[at] <= 'z') out_[at] = static_cast<char>(out_[at] - 'a' + 'A');
  }

  void sentence() {
    const std::size_t count = 5 + random_.below(14);
    for (std::size_t i = 0; i < count; ++i) {
      if (i != 0) out_ += random_.one_in(12) ? ", " : " ";
      word(i == 0);
    }
    out_ += '.';
  }

  // Lines of about 80 bytes, as an editor wraps them.
  void paragraph(std::size_t sentences) {
    std::size_t line_start = out_.size();
    for (std::size_t i = 0; i < sentences; ++i) {
      if (i != 0) out_ += out_.size() - line_start > 72 ? '\n' : ' ';
      if (out_.back() == '\n') line_start = out_.size();
      sentence();
    }
    out_ += "\n\n";
  }

  void heading(std::size_t level) {
    if (random_.one_in(10) && level <= 2) {  // setext
      const std::size_t at = out_.size();
      for (std::size_t i = 0, n = 2 + random_.below(4); i < n; ++i) {
        if (i != 0) out_ += ' ';
        word(i == 0);
      }
      out_ += '\n';
      out_.append(out_.size() - at - 1, level == 1 ? '=' : '-');
      out_ += "\n\n";
      return;
    }
    out_.append(level, '#');
    for (std::size_t i = 0, n = 1 + random_.below(5); i < n; ++i) {
      out_ += ' ';
      word(i == 0);
    }
    out_ += "\n\n";
  }

  void list() {
    const bool ordered = random_.one_in(3);
    for (std::size_t i = 0, n = 2 + random_.below(8); i < n; ++i) {
      out_ += ordered ? std::to_string(i + 1) + ". " : std::string(random_.one_in(4) ? "  - " : "- ");
      sentence();
      out_ += '\n';
    }
    out_ += '\n';
  }

  void fence(std::size_t lines) {
    out_ += random_.one_in(5) ? "~~~\n" : "```cpp\n";
    const bool tilde = out_[out_.size() - 2] == '~';
    for (std::size_t i = 0; i < lines; ++i) {
      if (random_.one_in(6)) out_ += "# not a heading inside a fence\n";
      out_ += code_lines[random_.below(std::size(code_lines))];
      out_ += '\n';
    }
    out_ += tilde ? "~~~\n\n" : "```\n\n";
  }

  void quote() {
    out_ += "> ";
    sentence();
    out_ += "\n> ";
    sentence();
    out_ += "\n\n";
  }

  void front_matter() {
    out_ += "---\ntitle: ";
    word(true);
    out_ += "\ntags: [";
    word(false);
    out_ += "]\n---\n\n";
  }

  void block() {
    const std::size_t pick = random_.below(100);
    if (pick < 12) {
      heading(2 + random_.below(3));
    } else if (pick < 55) {
      paragraph(1 + random_.below(6));
    } else if (pick < 68) {
      list();
    } else if (pick < 78) {
      fence(3 + random_.below(20));
    } else if (pick < 82) {
      quote();
    } else if (pick < 88) {
      paragraph(20 + random_.below(40));  // larger than a chunk: packed from its lines
    } else if (pick < 92) {
      for (std::size_t i = 0, n = 8 + random_.below(16); i < n; ++i) paragraph(2 + random_.below(4));  // long section
    } else if (pick < 94) {
      fence(80 + random_.below(120));  // a fence larger than a chunk: cut between lines
    } else if (pick < 95) {
      for (std::size_t i = 0, n = 60 + random_.below(120); i < n; ++i) {  // one line longer than a chunk
        out_ += ' ';
        sentence();
      }
      out_ += "\n\n";
    } else {
      out_ += "---\n\n";  // thematic break
      paragraph(1 + random_.below(3));
    }
  }

  random_source random_;
  std::string out_;
};

struct corpus_summary {
  std::size_t files = 0;           ///< files written, of every kind
  std::size_t markdown_files = 0;  ///< compilable .md files
  std::size_t skipped_files = 0;   ///< .md files the compile must skip
  std::uint64_t markdown_bytes = 0;
};

result<void> write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return agentctx::fail(errc::io_error, "cannot write the corpus file", path.string());
  return {};
}

/// Writes the corpus below `root` until it holds `target_bytes` of compilable markdown.
result<corpus_summary> write_corpus(const std::filesystem::path& root, std::uint64_t target_bytes) {
  markdown_generator generator(0xC0DEC0DEull + target_bytes);
  corpus_summary summary;
  std::error_code ec;
  while (summary.markdown_bytes < target_bytes) {
    const std::size_t n = summary.files;
    // Up to four levels: area/team_k/topic_j/file.md, 24 files a directory.
    std::filesystem::path directory = root / std::string(areas[n % std::size(areas)]);
    const std::size_t group = n / (std::size(areas) * 24);
    if (group % 4 != 0) directory /= "team_" + std::to_string(group % 7);
    if (group % 3 == 2) directory /= "topic_" + std::to_string(group % 11);
    std::filesystem::create_directories(directory, ec);
    if (ec) return system_failure("mkdir", directory.string(), ec.value());
    const std::string stem = "page_" + std::to_string(n);
    ++summary.files;
    if (n % 400 == 17) {  // binary, yet named .md
      std::string bytes = "\x89PNG\r\n\x1a\n";
      bytes.append(4096, '\0');
      AGENTCTX_TRY(write_file(directory / (stem + ".md"), bytes));
      ++summary.skipped_files;
      continue;
    }
    if (n % 400 == 29) {  // Latin-1, not UTF-8
      AGENTCTX_TRY(write_file(directory / (stem + ".md"), "# Caf\xe9\n\nUne entr\xe9" "e en Latin-1.\n"));
      ++summary.skipped_files;
      continue;
    }
    if (n % 50 == 3) {  // not matched by the include glob
      AGENTCTX_TRY(write_file(directory / (stem + ".txt"), "plain text, not compiled\n"));
      continue;
    }
    // Mostly 4 to 40 KB, one in 25 a large file of 100 to 400 KB.
    const std::size_t size = generator.below(25) == 0 ? 100'000 + generator.below(300'000)
                                                      : 4'000 + generator.below(36'000);
    std::string text = generator.document(size);
    if (n % 10 == 4) {  // CRLF line endings
      std::string crlf;
      crlf.reserve(text.size() + text.size() / 20);
      for (const char c : text) {
        if (c == '\n') crlf += '\r';
        crlf += c;
      }
      text = std::move(crlf);
    }
    AGENTCTX_TRY(write_file(directory / (stem + ".md"), text));
    ++summary.markdown_files;
    summary.markdown_bytes += text.size();
  }
  return summary;
}

// ---- timing ----------------------------------------------------------------------

/// The sample with the median wall time (its CPU time comes with it).
elapsed median(std::vector<elapsed> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end(), [](const elapsed& a, const elapsed& b) { return a.wall < b.wall; });
  return samples[samples.size() / 2];
}


// ---- measurements ------------------------------------------------------------------

const std::vector<std::string> include_markdown = {"**/*.md"};

/// The baseline: every file read into memory as `cat` would, one buffer reused.
result<std::uint64_t> read_every_file(const std::string& root, const std::vector<std::string>& paths) {
  std::vector<char> buffer(std::size_t{1} << 20);
  std::uint64_t total = 0;
  for (const std::string& relative : paths) {
    const std::string path = root + "/" + relative;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return system_failure("open", path, errno);
    for (;;) {
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int e = errno;
        ::close(fd);
        return system_failure("read", path, e);
      }
      if (n == 0) break;
      total += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
  }
  return total;
}

struct configuration {
  const char* name;
  std::uint32_t dim;
  agdb::element_type element;
};

constexpr configuration configurations[] = {
    {"dim 128 f32", 128, agdb::element_type::f32},
    {"dim 128 i8", 128, agdb::element_type::i8},
    {"dim 384 f32", 384, agdb::element_type::f32},
};

struct compile_figures {
  elapsed time;  ///< median
  agdb::compile_summary summary;
};

result<compile_figures> measure_compile(const std::string& root, const std::string& out_path,
                                        const configuration& config, int runs) {
  agdb::compile_options compile;
  compile.root = root;
  compile.includes = include_markdown;
  compile.element = config.element;
  compile.tool_version = "bench";
  agdb::hash_embedder embedder(config.dim);
  std::vector<elapsed> samples;
  compile_figures figures;
  std::optional<agentctx::sha256_digest> first_digest;
  for (int i = 0; i < runs; ++i) {
    const stopwatch watch;
    auto summary = agdb::compile_layer(io::default_file_system(), compile, embedder, out_path);
    samples.push_back(watch.stop());
    if (!summary) return unexpected(summary.error());
    figures.summary = std::move(*summary);
    auto written = io::default_file_system().map(out_path);
    if (!written) return unexpected(written.error());
    const agentctx::sha256_digest digest = agentctx::sha256(written->bytes());
    if (first_digest && digest != *first_digest) {
      return agentctx::fail(errc::corrupt, "two compiles of the same corpus wrote different bytes", out_path);
    }
    first_digest = digest;
  }
  figures.time = median(std::move(samples));
  return figures;
}

/// The phases of one compile at dim 128 f32, each done alone on this thread.
struct phase_figures {
  elapsed collect, read_and_chunk, ids, embed, write;
  std::size_t chunks = 0;
  std::uint64_t compiled_bytes = 0;
  elapsed total() const {
    return {collect.wall + read_and_chunk.wall + ids.wall + embed.wall + write.wall,
            collect.cpu + read_and_chunk.cpu + ids.cpu + embed.cpu + write.cpu};
  }
};

result<phase_figures> measure_phases(const std::string& root, const std::string& out_path) {
  phase_figures figures;
  const stopwatch collect_watch;
  auto paths = agdb::collect_sources(root, include_markdown, {});
  figures.collect = collect_watch.stop();
  if (!paths) return unexpected(paths.error());

  const stopwatch chunk_watch;
  agdb::layer_contents layer;
  std::vector<std::string> chunk_paths;  // the relative path of each chunk
  for (const std::string& path : *paths) {
    auto bytes = agdb::detail::read_file(root + "/" + path);
    if (!bytes) return unexpected(bytes.error());
    const std::string_view text = bytes->text();
    if (!agdb::detail::reason_to_skip(text).empty()) continue;
    figures.compiled_bytes += text.size();
    for (agdb::text_chunk& piece : agdb::chunk_markdown(text)) {
      agdb::chunk c;
      c.kind = "canonical";
      c.author = "human";
      c.content = std::move(piece.content);
      c.sources.push_back(agdb::source_ref::to_string(path + ":" + std::to_string(piece.first_line)));
      layer.chunks.push_back(std::move(c));
      chunk_paths.push_back(path);
    }
  }
  figures.read_and_chunk = chunk_watch.stop();
  figures.chunks = layer.chunks.size();

  const stopwatch id_watch;
  agdb::detail::chunk_id_assigner ids;
  for (std::size_t i = 0; i < layer.chunks.size(); ++i) {
    layer.chunks[i].id = ids.assign(chunk_paths[i], layer.chunks[i].content);
  }
  figures.ids = id_watch.stop();

  const stopwatch embed_watch;
  agdb::hash_embedder embedder(128);
  std::vector<std::string_view> texts;
  texts.reserve(layer.chunks.size());
  for (const agdb::chunk& c : layer.chunks) texts.push_back(c.content);
  layer.embeddings.dim = 128;
  layer.embeddings.f32_values.resize(texts.size() * 128);
  auto embedded = embedder.embed(texts, layer.embeddings.f32_values);
  figures.embed = embed_watch.stop();
  if (!embedded) return unexpected(embedded.error());

  layer.metadata_json = agdb::layer_metadata_json(embedder.profile(), "agentsdb", "bench");
  const stopwatch write_watch;
  auto written = agdb::write_layer(io::default_file_system(), out_path, layer);
  figures.write = write_watch.stop();
  if (!written) return unexpected(written.error());
  return figures;
}

// ---- report ------------------------------------------------------------------------

void print_phase(const char* name, const elapsed& e, std::uint64_t bytes, const elapsed& total) {
  std::printf("  %-16s wall %8.1f ms  CPU %8.1f ms  %7.0f MB/s  %4.0f%% of the sum\n", name, e.wall * 1e3,
              e.cpu * 1e3, megabytes(bytes) / e.wall, 100.0 * e.wall / total.wall);
}

int report_failure(const agentctx::error& e) {
  std::fprintf(stderr, "compile_bench: error: %s\n", e.describe().c_str());
  return 1;
}

int run(const options& o) {
  auto made = scratch_directory::create("compile_bench");
  if (!made) return report_failure(made.error());
  const scratch_directory& dir = *made;
  const std::string root = dir.path() + "/corpus";
  std::printf("compile_bench: %.0f MB markdown corpus in %s%s\n", megabytes(o.corpus_bytes), root.c_str(),
              o.small ? " (--small: a smoke test, single runs)" : "");
  print_machine_note();
  std::fflush(stdout);

  const stopwatch corpus_watch;
  auto corpus = write_corpus(root, o.corpus_bytes);
  if (!corpus) return report_failure(corpus.error());
  std::printf("corpus: %zu files (%zu markdown, %.1f MB; %zu binary or non-UTF-8 .md to skip), written in %.2f s\n\n",
              corpus->files, corpus->markdown_files, megabytes(corpus->markdown_bytes), corpus->skipped_files,
              corpus_watch.stop().wall);
  std::fflush(stdout);

  auto paths = agdb::collect_sources(root, include_markdown, {});
  if (!paths) return report_failure(paths.error());
  std::vector<elapsed> read_samples;
  std::uint64_t read_bytes = 0;
  for (int i = 0; i < std::max(o.runs, 3); ++i) {  // the first run also warms the page cache
    const stopwatch watch;
    auto read = read_every_file(root, *paths);
    read_samples.push_back(watch.stop());
    if (!read) return report_failure(read.error());
    read_bytes = *read;
  }
  const elapsed read_time = median(std::move(read_samples));

  std::vector<compile_figures> compiles;
  for (const configuration& config : configurations) {
    auto figures = measure_compile(root, dir.path() + "/layer.agdb", config, o.runs);
    if (!figures) return report_failure(figures.error());
    if (figures->summary.skipped.size() != corpus->skipped_files) {
      return report_failure(agentctx::make_error(errc::corrupt, "the compile skipped " +
                                                                    std::to_string(figures->summary.skipped.size()) +
                                                                    " files, expected " +
                                                                    std::to_string(corpus->skipped_files)));
    }
    compiles.push_back(std::move(*figures));
  }
  auto phases = measure_phases(root, dir.path() + "/phases.agdb");
  if (!phases) return report_failure(phases.error());

  const double read_mb_per_s = megabytes(read_bytes) / read_time.wall;
  std::printf("%-26s %-12s %-34s %-14s %s\n", "figure", "measured", "baseline (same run)", "goal", "");
  std::puts(std::string(96, '-').c_str());
  for (std::size_t i = 0; i < compiles.size(); ++i) {
    const compile_figures& f = compiles[i];
    const double mb_per_s = megabytes(f.summary.input_bytes) / f.time.wall;
    const bool goal_figure = i == 0;
    std::printf("%-26s %-12s %-34s %-14s %s\n", (std::string("compile, ") + configurations[i].name).c_str(),
                format("%.1f MB/s", mb_per_s).c_str(),
                ("read the files " + format("%.0f MB/s", read_mb_per_s)).c_str(),
                goal_figure ? format(">= %.0f MB/s", compile_goal_mb_per_s).c_str() : "",
                goal_figure ? verdict(mb_per_s >= compile_goal_mb_per_s) : "");
  }
  std::puts(std::string(96, '-').c_str());

  std::puts("compiles (median run):");
  for (std::size_t i = 0; i < compiles.size(); ++i) {
    const compile_figures& f = compiles[i];
    std::printf("  %-12s wall %7.1f ms  CPU %7.1f ms (%.0f MB/s per CPU second); %zu files, %zu skipped, %zu chunks, "
                "layer %.1f MB\n",
                configurations[i].name, f.time.wall * 1e3, f.time.cpu * 1e3,
                megabytes(f.summary.input_bytes) / f.time.cpu, f.summary.files, f.summary.skipped.size(),
                f.summary.chunks, megabytes(f.summary.output_bytes));
  }
  std::printf("  read the files: wall %.1f ms, CPU %.1f ms for %.1f MB (all matched files, skipped ones included)\n",
              read_time.wall * 1e3, read_time.cpu * 1e3, megabytes(read_bytes));

  const elapsed sum = phases->total();
  std::printf("phases of one dim 128 f32 compile, one thread, each alone (%zu chunks; MB/s of compiled markdown):\n",
              phases->chunks);
  print_phase("collect", phases->collect, phases->compiled_bytes, sum);
  print_phase("read and chunk", phases->read_and_chunk, phases->compiled_bytes, sum);
  print_phase("ids (SHA-256)", phases->ids, phases->compiled_bytes, sum);
  print_phase("embed", phases->embed, phases->compiled_bytes, sum);
  print_phase("write", phases->write, phases->compiled_bytes, sum);
  std::printf("  %-16s wall %8.1f ms  CPU %8.1f ms  %7.0f MB/s\n", "sum", sum.wall * 1e3, sum.cpu * 1e3,
              megabytes(phases->compiled_bytes) / sum.wall);
  std::printf("medians of %d compiles per configuration, %d reads\n", o.runs, std::max(o.runs, 3));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = 0;
  const std::optional<options> o = parse_options(argc, argv, exit_code);
  if (!o) return exit_code;
  return run(*o);
}
