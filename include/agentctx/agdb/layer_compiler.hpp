// agentctx/agdb/layer_compiler.hpp: compiles markdown sources into a layer.
//
// `compile_layer` is the library half of `agentsdb compile` (seed 000
// section 15.1): collect the sources (source_collector.hpp), chunk them
// (markdown_chunker.hpp), embed the chunks, and write one AGDB layer file
// atomically (layer_writer.hpp).
//
//   auto summary = compile_layer(io::default_file_system(),
//                                {.root = ".", .includes = {"AGENTS.md"}},
//                                embedder, "AGENTS.db");
//
// Reproducibility: the output depends only on the bytes of the sources, their
// paths relative to the root, the options and the embedder's vectors; never
// on directory order, the machine, the clock or the root's absolute path.
// Two compiles of the same inputs give byte-identical files.
//
// The layer:
//   - chunks come in input order: source files sorted by relative path (by
//     bytes), each file's chunks in document order, then the inline texts in
//     the order given;
//   - every chunk has kind `options.kind`, author "human", confidence 1.0 and
//     created_at_unix_ms 0 (no timestamps);
//   - a file's chunk has one string source "PATH:LINE": the relative path and
//     the 1-based line of the chunk's first line (text_chunk::first_line). An
//     inline text names no file, so its chunks have no source (seed 000
//     section 7.2 allows zero);
//   - chunk ids: the first four bytes, read as a little-endian u32, of
//     SHA-256(PATH || 0x00 || CONTENT), where PATH is the relative path (the
//     empty string for an inline text) and CONTENT the chunk's content. When
//     that id is 0 or already taken by an earlier chunk of the layer, the
//     candidates SHA-256(PATH || 0x00 || CONTENT || 0x00 || K) for K = "1",
//     "2", ... (decimal ASCII) are tried in turn. Ids thus stay the same as
//     long as a chunk's path and content do, independent of other files,
//     except in the (rare) event of a collision, which input order settles;
//   - embeddings are row i for chunk i, f32 as the embedder returns them, or
//     i8 quantised with quant_scale = choose_i8_scale() over the whole matrix
//     (max |x| / 127), so the largest component keeps full i8 precision;
//   - the layer metadata is layer_metadata_json(embedder.profile(),
//     tool_name, tool_version).
//
// Skipped sources: a file with a NUL byte in its first 8 KiB (binary) or that
// is not valid UTF-8 is left out and listed in compile_summary::skipped; the
// compile goes on. The library never prints: the caller reports them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "agentctx/agdb/detail/parallel_in_order.hpp"
#include "agentctx/agdb/embedder.hpp"
#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/format.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/agdb/markdown_chunker.hpp"
#include "agentctx/agdb/source_collector.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"

namespace agentctx::agdb {

struct compile_options {
  std::string root = ".";                 ///< directory the globs and source paths are relative to
  std::vector<std::string> includes;      ///< globs of the files to compile (source_collector.hpp)
  std::vector<std::string> excludes;      ///< globs of files and directories to leave out
  std::vector<std::string> texts;         ///< inline contents (markdown), compiled after the files
  std::string kind = "canonical";         ///< kind of every chunk; non-empty UTF-8
  element_type element = element_type::f32;
  chunking_options chunking;
  std::string tool_name = "agentsdb";     ///< recorded in the layer metadata
  std::string tool_version;               ///< recorded in the layer metadata
  std::size_t embed_batch_size = 256;     ///< chunks per embedder::embed call; >= 1
  /// Threads that read and chunk the sources and, for a hash_embedder, embed
  /// them (other embedders are called from the calling thread only); 0: one
  /// per CPU core. The output is the same for every value.
  std::size_t threads = 0;
};

/// A source file that was not compiled, and why.
struct skipped_source {
  std::string path;    ///< relative to the root
  std::string reason;  ///< e.g. "binary (NUL byte at offset 12)", "not valid UTF-8 (byte 345)"
  friend bool operator==(const skipped_source&, const skipped_source&) = default;
};

struct compile_summary {
  std::size_t files = 0;                ///< source files compiled (skipped ones not counted)
  std::vector<skipped_source> skipped;  ///< in path order
  std::size_t chunks = 0;               ///< chunks in the layer
  std::uint64_t input_bytes = 0;        ///< bytes of the compiled files and inline texts
  std::uint64_t output_bytes = 0;       ///< size of the written layer file
  std::chrono::nanoseconds elapsed{};   ///< wall time of the whole compile
};

/// Called after each source file is processed (compiled or skipped) with the
/// files done so far, the number of files matched, and the bytes of the files
/// read so far (skipped ones included). Not called for inline texts.
using compile_progress =
    std::function<void(std::size_t files_done, std::size_t files_total, std::uint64_t bytes_done)>;

namespace detail {

// Bytes examined for a NUL when deciding whether a file is binary.
inline constexpr std::size_t binary_probe_bytes = 8192;

// Why `text` cannot be compiled as markdown, or an empty string.
inline std::string reason_to_skip(std::string_view text) {
  if (text.empty()) return {};  // an empty mapping may have no address
  const std::size_t probe = std::min(text.size(), binary_probe_bytes);
  if (const void* nul = std::memchr(text.data(), '\0', probe); nul != nullptr) {
    return "binary (NUL byte at offset " + std::to_string(static_cast<const char*>(nul) - text.data()) + ")";
  }
  if (const std::size_t bad = find_invalid_utf8(text); bad != text.size()) {
    return "not valid UTF-8 (byte " + std::to_string(bad) + ")";
  }
  return {};
}

// Hands out the chunk ids described at the top of this header. A candidate
// depends only on (path, content, attempt), so any thread may compute one;
// which candidate a chunk gets depends on the ids taken before it, so
// assign() runs in input order.
class chunk_id_assigner {
 public:
  /// Candidate number `attempt` (0 first) for a chunk: the first four bytes of
  /// its SHA-256 message, little-endian; may be 0 or taken. `hasher` is
  /// scratch state, one per thread.
  static std::uint32_t candidate(sha256_hasher& hasher, std::string_view path, std::string_view content,
                                 std::uint64_t attempt) {
    hasher.update(path);
    hasher.update(std::string_view("\0", 1));
    hasher.update(content);
    if (attempt != 0) {
      hasher.update(std::string_view("\0", 1));
      hasher.update(std::to_string(attempt));
    }
    const sha256_digest digest = hasher.finish();
    return load_u32(digest.data());
  }

  /// The id of the next chunk, given `first_candidate` = candidate(.., 0) for it.
  std::uint32_t assign(std::string_view path, std::string_view content, std::uint32_t first_candidate) {
    if (first_candidate != 0 && insert(first_candidate)) return first_candidate;
    for (std::uint64_t attempt = 1;; ++attempt) {
      const std::uint32_t id = candidate(hasher_, path, content, attempt);
      if (id != 0 && insert(id)) return id;
    }
  }

  /// The id of the next chunk.
  std::uint32_t assign(std::string_view path, std::string_view content) {
    return assign(path, content, candidate(hasher_, path, content, 0));
  }

 private:
  // An open-addressing set of the ids taken so far (0 marks a free slot; ids
  // are SHA-256 bits, so they need no further mixing). A node-based set
  // would cost a cache miss per chunk.
  bool insert(std::uint32_t id) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = id & mask;; i = (i + 1) & mask) {
      if (slots_[i] == id) return false;
      if (slots_[i] == 0) {
        slots_[i] = id;
        ++count_;
        return true;
      }
    }
  }

  void grow() {
    std::vector<std::uint32_t> old(std::max<std::size_t>(64, slots_.size() * 2), 0);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const std::uint32_t id : old) {
      if (id == 0) continue;
      std::size_t i = id & mask;
      while (slots_[i] != 0) i = (i + 1) & mask;
      slots_[i] = id;
    }
  }

  sha256_hasher hasher_;
  std::vector<std::uint32_t> slots_;
  std::size_t count_ = 0;
};

// A source file read, checked and chunked, with the first id candidate of
// each chunk: the part of a compile that runs on any thread.
struct prepared_source {
  std::vector<text_chunk> chunks;
  std::vector<std::uint32_t> id_candidates;  // chunk_id_assigner::candidate(.., 0) of each chunk
  std::string skip_reason;                   // not empty: the file is not compiled
  std::uint64_t bytes = 0;                   // size of the file
};

// The bytes of a whole file, as long as it was when opened. read() rather
// than mmap: with several threads at work every munmap interrupts the other
// cores to flush their TLBs, and faulting pages in one at a time costs more
// than copying them.
struct file_bytes {
  std::unique_ptr<std::byte[]> data;  // uninitialised before the read: no zero-filling pass
  std::size_t size = 0;
  std::string_view text() const noexcept { return {reinterpret_cast<const char*>(data.get()), size}; }
};

inline result<file_bytes> read_file(const std::string& path) {
  auto file = io::default_file_system().open(path, io::open_options{});
  if (!file) return unexpected(std::move(file).error());
  auto length = (*file)->size();
  if (!length) return unexpected(std::move(length).error());
  if (*length > std::numeric_limits<std::size_t>::max()) return fail(errc::unsupported, "file too large", path);
  file_bytes bytes;
  bytes.data.reset(new std::byte[static_cast<std::size_t>(*length)]);
  while (bytes.size < *length) {
    auto read = (*file)->read_at(bytes.size, std::span(bytes.data.get() + bytes.size, *length - bytes.size));
    if (!read) return unexpected(std::move(read).error());
    if (*read == 0) break;  // the file shrank since it was measured
    bytes.size += *read;
  }
  return bytes;
}

inline result<prepared_source> prepare_source(const std::string& root, const std::string& path,
                                              const chunking_options& chunking) {
  auto contents = read_file(io::join_path(root, path));
  if (!contents) return unexpected(std::move(contents).error());
  const std::string_view text = contents->text();
  prepared_source prepared;
  prepared.bytes = text.size();
  prepared.skip_reason = reason_to_skip(text);
  if (!prepared.skip_reason.empty()) return prepared;
  prepared.chunks = chunk_markdown(text, chunking);
  prepared.id_candidates.reserve(prepared.chunks.size());
  sha256_hasher hasher;
  for (const text_chunk& piece : prepared.chunks) {
    prepared.id_candidates.push_back(chunk_id_assigner::candidate(hasher, path, piece.content, 0));
  }
  return prepared;
}

// Builds the layer contents chunk by chunk, in input order.
class layer_builder {
 public:
  layer_builder(const compile_options& options, embedder& embedder)
      : options_(options), embedder_(embedder), dim_(embedder.profile().dim) {
    contents_.embeddings.dim = dim_;
  }

  /// Adds the chunks of one source; `id_candidates` holds the first id
  /// candidate of each chunk, or is empty to have them computed here.
  void add(std::string_view path, std::vector<text_chunk>&& chunks, std::span<const std::uint32_t> id_candidates) {
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      text_chunk& piece = chunks[i];
      chunk c;
      c.id = id_candidates.empty() ? ids_.assign(path, piece.content)
                                   : ids_.assign(path, piece.content, id_candidates[i]);
      c.kind = options_.kind;
      c.content = std::move(piece.content);
      c.author = "human";
      c.confidence = 1.0f;
      c.created_at_unix_ms = 0;
      if (!path.empty()) {
        std::string source;
        source.reserve(path.size() + 11);
        source.append(path).push_back(':');
        source.append(std::to_string(piece.first_line));
        c.sources.push_back(source_ref::to_string(std::move(source)));
      }
      contents_.chunks.push_back(std::move(c));
    }
  }

  /// Embeds every chunk, then quantises and adds the metadata. The matrix is
  /// allocated once, at its final size, and each batch embeds straight into
  /// its rows. A hash_embedder is stateless, so its batches are spread over
  /// `threads` threads; any other embedder is called from this thread only,
  /// batch after batch (see embedder::embed on overlapping calls).
  result<layer_contents> finish(std::size_t threads) {
    const std::vector<chunk>& chunks = contents_.chunks;
    std::vector<std::string_view> texts;
    texts.reserve(chunks.size());
    for (const chunk& c : chunks) texts.push_back(c.content);
    embedding_matrix& m = contents_.embeddings;
    m.f32_values.resize(chunks.size() * dim_);
    const std::size_t batch = options_.embed_batch_size;
    const std::size_t batches = (chunks.size() + batch - 1) / batch;
    std::vector<result<void>> embedded(batches);
    const bool thread_safe = dynamic_cast<const hash_embedder*>(&embedder_) != nullptr;
    AGENTCTX_TRY(produce_in_parallel_consume_in_order(
        batches, thread_safe ? threads : 1,
        [&](std::size_t i) {
          const std::size_t first = i * batch;
          const std::size_t count = std::min(batch, chunks.size() - first);
          embedded[i] = embedder_.embed(std::span(texts).subspan(first, count),
                                        std::span(m.f32_values).subspan(first * dim_, count * dim_));
        },
        [&](std::size_t i) { return std::move(embedded[i]); }));

    m.type = options_.element;
    if (options_.element == element_type::i8) {
      m.quant_scale = choose_i8_scale(m.f32_values);
      m.i8_values = quantize_i8(m.f32_values, m.quant_scale);
      std::vector<float>().swap(m.f32_values);
    } else {
      m.quant_scale = 1.0f;
    }
    contents_.metadata_json = layer_metadata_json(embedder_.profile(), options_.tool_name, options_.tool_version);
    return std::move(contents_);
  }

 private:
  const compile_options& options_;
  embedder& embedder_;
  std::size_t dim_;
  layer_contents contents_;
  chunk_id_assigner ids_;
};

inline result<void> check_compile_options(const compile_options& options, const embedder& embedder) {
  if (options.kind.empty()) return fail(errc::invalid_argument, "chunk kind must not be empty");
  if (!is_valid_utf8(options.kind)) return fail(errc::invalid_argument, "chunk kind is not valid UTF-8");
  if (options.element != element_type::f32 && options.element != element_type::i8) {
    return fail(errc::invalid_argument, "element type must be f32 or i8");
  }
  if (options.chunking.max_chunk_bytes < chunking_options::minimum_max_chunk_bytes) {
    return fail(errc::invalid_argument, "max chunk bytes must be at least " +
                                            std::to_string(chunking_options::minimum_max_chunk_bytes));
  }
  if (options.embed_batch_size == 0) return fail(errc::invalid_argument, "embed batch size must be at least 1");
  if (embedder.profile().dim == 0) return fail(errc::invalid_argument, "the embedder's dimension is 0");
  if (options.includes.empty() && options.texts.empty()) {
    return fail(errc::invalid_argument, "nothing to compile: no include pattern and no inline text");
  }
  for (std::size_t i = 0; i < options.texts.size(); ++i) {
    if (const std::size_t bad = find_invalid_utf8(options.texts[i]); bad != options.texts[i].size()) {
      return fail(errc::invalid_utf8, "inline text " + std::to_string(i + 1) + " is not valid UTF-8 (byte " +
                                          std::to_string(bad) + ")");
    }
  }
  return {};
}

inline std::size_t compile_threads(const compile_options& options) {
  if (options.threads != 0) return options.threads;
  return hardware_threads();
}

}  // namespace detail

/// Compiles the sources and texts of `options` into one layer written at
/// `out_path` through `fs` (atomically, see write_layer: an existing file is
/// replaced whole, never modified, and kept as it was on failure). Sources
/// are found and read on the real disk below `options.root`; `fs` receives
/// only the output. `progress`, when set, is called as documented at
/// compile_progress, on the calling thread. Source files are read and
/// chunked on up to `options.threads` threads, and a hash_embedder's batches
/// embedded likewise; the output does not depend on the number of threads.
///
/// Errors:
///   invalid_argument  empty or non-UTF-8 kind, max_chunk_bytes below
///                     chunking_options::minimum_max_chunk_bytes, a batch
///                     size of 0, an embedder of dimension 0, no include and
///                     no text, a malformed glob, a root that is no directory;
///   invalid_utf8      an inline text is not valid UTF-8;
///   not_found         the root does not exist, or the includes match no file
///                     and there is no inline text;
///   the file system's errors (with the path) for a source that cannot be
///   read or a directory that cannot be listed (the first such file in path
///   order), the embedder's errors, and those of write_layer.
inline result<compile_summary> compile_layer(io::file_system& fs, const compile_options& options, embedder& embedder,
                                             const std::string& out_path, const compile_progress& progress = {}) {
  const auto started = std::chrono::steady_clock::now();
  AGENTCTX_TRY(detail::check_compile_options(options, embedder));
  std::vector<std::string> paths;
  if (!options.includes.empty()) {
    auto collected = collect_sources(options.root, options.includes, options.excludes);
    if (!collected) return unexpected(std::move(collected).error());
    paths = std::move(*collected);
    if (paths.empty() && options.texts.empty()) {
      return fail(errc::not_found, "no file matches the include patterns", options.root);
    }
  }

  compile_summary summary;
  detail::layer_builder builder(options, embedder);
  const std::size_t threads = detail::compile_threads(options);
  std::vector<result<detail::prepared_source>> prepared(paths.size());
  std::uint64_t bytes_read = 0;
  AGENTCTX_TRY(detail::produce_in_parallel_consume_in_order(
      paths.size(), threads,
      [&](std::size_t i) { prepared[i] = detail::prepare_source(options.root, paths[i], options.chunking); },
      [&](std::size_t i) -> result<void> {
        auto source = std::move(prepared[i]);
        if (!source) return unexpected(std::move(source).error());
        bytes_read += source->bytes;
        if (!source->skip_reason.empty()) {
          summary.skipped.push_back({paths[i], std::move(source->skip_reason)});
        } else {
          builder.add(paths[i], std::move(source->chunks), source->id_candidates);
          ++summary.files;
          summary.input_bytes += source->bytes;
        }
        if (progress) progress(i + 1, paths.size(), bytes_read);
        return {};
      }));
  for (const std::string& text : options.texts) {
    builder.add({}, chunk_markdown(text, options.chunking), {});
    summary.input_bytes += text.size();
  }

  auto contents = builder.finish(threads);
  if (!contents) return unexpected(std::move(contents).error());
  summary.chunks = contents->chunks.size();
  AGENTCTX_TRY(write_layer(fs, out_path, *contents));
  auto written = fs.file_size(out_path);
  if (!written) return unexpected(std::move(written).error());
  summary.output_bytes = *written;
  summary.elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started);
  return summary;
}

}  // namespace agentctx::agdb
