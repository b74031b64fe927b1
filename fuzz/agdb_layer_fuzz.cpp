// fuzz/agdb_layer_fuzz.cpp: libFuzzer target for AGDB layer files.
//
// Every input is taken as the bytes of a layer file and must never crash,
// hang, leak or trip a sanitizer:
//   1. layer_reader::from_bytes(); most inputs stop here with an error;
//   2. validate();
//   3. every accessor on every element, as a tool walking a damaged file
//      would: chunk(i), sources(), row(embedding_row) with operator[] and
//      to_f32(), string(id) and find_string(id) for every string, find_chunk,
//      metadata_json(), summarize_layer(), describe_chunk(),
//      read_layer_contents(). Their errors are fine; crashes are not;
//   4. when validate() reports nothing, the layer must survive a round trip:
//      read_layer_contents() succeeds, encode_layer() accepts what it read,
//      the encoded bytes open and validate clean, and reading and encoding
//      them again gives the same bytes. A failure there means the reader,
//      the validator and the writer disagree about what a valid layer is,
//      which is a bug: the target traps (__builtin_trap) so libFuzzer keeps
//      the input;
//   5. the layer is searched as the base of a layer_stack (vector and hybrid
//      modes, default and explicit kind filters): every row is scored, the
//      visibility (overrides, tombstones) computed, the hits resolved. Errors
//      are fine on a damaged layer; on one validate() accepts, a stack that
//      builds must answer every query (else the target traps).
// Work per input is capped (values converted per row, rows materialised by
// read_layer_contents) so that small inputs run in microseconds.
//
// Seeds: fuzz/seeds/agdb_layer_fuzz/ holds small layers made by write_layer:
//   f32_one_chunk.agdb       1 chunk, dim 4, no sources, no metadata
//   f32_sources_meta.agdb    3 chunks, dim 3, string and chunk-id sources
//                            (one naming another layer's chunk), a shared
//                            string, non-ASCII content, metadata {"v":1}
//   i8_two_chunks.agdb       2 chunks, i8 dim 8, quant_scale 0.05, a source
//   empty.agdb               0 chunks, dim 2, metadata {}
//   minor_version.agdb       1 chunk, dim 1, version_minor 3, metadata
//                            naming an embedding profile
// and the inputs fuzzing found bugs with, named regression_*:
//   regression_dim_zero.agdb an empty layer whose matrix has dim 0 (and
//                            row_count 2^57, data_length 0): validate()
//                            accepts it, although docs/format/agdb.md rule 9
//                            requires dim > 0, and encode_layer() rejects
//                            what read_layer_contents() returns, so the round
//                            trip traps until validate() reports dim 0.
// agdb_layer_fuzz.dict lists the format's magic, section kinds and common
// field values.
//
// Build and run (clang only):
//   cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DAGENTCTX_BUILD_FUZZERS=ON
//         -DAGENTCTX_BUILD_TESTS=OFF -DAGENTCTX_BUILD_BENCH=OFF -DAGENTCTX_BUILD_EXAMPLES=OFF
//         -DAGENTCTX_BUILD_CLI=OFF                  (one command)
//   cmake --build build-fuzz --target agdb_layer_fuzz
//   scripts/fuzz.sh --build build-fuzz --seconds 300 agdb_layer_fuzz
// or by hand, with the dictionary:
//   build-fuzz/fuzz/agdb_layer_fuzz -dict=fuzz/agdb_layer_fuzz.dict corpus/ fuzz/seeds/agdb_layer_fuzz/
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_search.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_summary.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/layer_writer.hpp"

namespace {

namespace agdb = agentctx::agdb;

// At most this many values of one row are converted; longer rows are cut.
constexpr std::size_t max_values_per_row = 1024;
// read_layer_contents() copies one row per chunk: skip it (and the round
// trip) when that would be more values than this.
constexpr std::uint64_t max_materialised_values = std::uint64_t{1} << 20;

// Folds every value read into one word that is kept alive, so that no read
// is optimised away.
volatile std::uint64_t observed = 0;

void observe(std::uint64_t value) { observed = observed + value; }
void observe(std::string_view text) {
  observe(text.size() + (text.empty() ? 0u : static_cast<unsigned char>(text[0])));
}
void observe(float value) { observe(static_cast<std::uint64_t>(value == value ? 1 : 2)); }

[[noreturn]] void library_bug() { __builtin_trap(); }

void read_row(const agdb::layer_reader& reader, std::uint32_t row_1_based) {
  auto row = reader.row(row_1_based);
  if (!row) return;
  std::array<float, max_values_per_row> values;
  row->to_f32(values);
  const std::size_t n = std::min<std::size_t>(row->dim(), values.size());
  for (std::size_t i = 0; i < n; ++i) {
    if ((*row)[i] != values[i] && (*row)[i] == (*row)[i]) library_bug();  // NaN != NaN
  }
  if (n != 0) observe(values[n - 1]);
}

void read_every_element(const agdb::layer_reader& reader) {
  for (std::size_t i = 0; i < reader.chunk_count(); ++i) {
    const agdb::chunk_record record = reader.record(i);
    observe(std::uint64_t{record.id});
    auto view = reader.chunk(i);
    if (view) {
      observe(view->content);
      if (auto sources = reader.sources(*view)) observe(std::uint64_t{sources->size()});
      if (auto found = reader.find_chunk(view->id)) observe(std::uint64_t{*found});
    }
    if (auto sources = reader.sources(record)) observe(std::uint64_t{sources->size()});
    read_row(reader, record.embedding_row);
  }
  for (std::size_t id = 1; id <= reader.string_count(); ++id) {
    const auto string_id = static_cast<std::uint32_t>(id);
    if (auto text = reader.string(string_id)) observe(*text);
    if (auto text = reader.find_string(string_id)) observe(*text);
  }
  for (std::size_t i = 0; i < reader.relationship_count(); ++i) observe(std::uint64_t{reader.relationship(i).kind});
  if (auto json = reader.metadata_json()) observe(*json);
  if (auto summary = agdb::summarize_layer(reader)) observe(std::uint64_t{summary->kinds.size()});
  if (reader.chunk_count() != 0) {
    if (auto details = agdb::describe_chunk(reader, reader.record(0).id)) {
      observe(std::uint64_t{details->sources.size()});
    }
  }
}

// Values read_layer_contents() would copy. No overflow: open() checked that
// the chunk records lie in the input, so chunk_count < 2^32 for any input
// libFuzzer can hold, and dim is a u32.
std::uint64_t values_materialised(const agdb::layer_reader& reader) {
  return std::uint64_t{reader.chunk_count()} * reader.embedding_header().dim;
}

void check_round_trip(const agdb::layer_reader& reader) {
  auto contents = agdb::read_layer_contents(reader);
  if (!contents) library_bug();  // a valid layer is readable
  auto encoded = agdb::encode_layer(*contents);
  if (!encoded) library_bug();  // ... and what it holds is writable
  auto reopened = agdb::layer_reader::from_bytes(*encoded, "re-encoded");
  if (!reopened) library_bug();
  if (!agdb::validate(*reopened, 1).empty()) library_bug();
  auto contents_again = agdb::read_layer_contents(*reopened);
  if (!contents_again) library_bug();
  auto encoded_again = agdb::encode_layer(*contents_again);
  if (!encoded_again || *encoded_again != *encoded) library_bug();
}

void search(std::span<const std::byte> bytes, bool valid) {
  auto reader = agdb::layer_reader::from_bytes(bytes, "fuzz-input");
  if (!reader) library_bug();  // it opened once already
  std::vector<std::pair<agdb::layer_id, agdb::layer_reader>> readers;
  readers.emplace_back(agdb::layer_id::base, std::move(*reader));
  auto stack = agdb::layer_stack::build(std::move(readers));
  if (!stack) return;
  const std::vector<float> query(stack->dim(), 0.5f);
  agdb::layer_searcher searcher(*stack);
  for (int variant = 0; variant < 3; ++variant) {
    agdb::search_request request;
    request.query_vector = query;
    request.k = 4;
    if (variant == 1) {
      request.mode = agdb::search_mode::hybrid;
      request.query_text = "the Model 42";
    }
    if (variant == 2) request.kinds = agdb::kind_filter({"tombstone", "meta.*", "options"});
    auto hits = searcher.search(request);
    if (!hits) {
      if (valid) library_bug();
      continue;
    }
    for (const auto& hit : *hits) observe(std::uint64_t{hit.chunk.id} + hit.conflicts.size());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto reader = agdb::layer_reader::from_bytes(bytes, "fuzz-input");
  if (!reader) return 0;
  const std::vector<agdb::violation> violations = agdb::validate(*reader);
  read_every_element(*reader);
  if (values_materialised(*reader) > max_materialised_values) return 0;
  if (std::uint64_t{reader->embedding_header().row_count} * reader->embedding_header().dim <=
      max_materialised_values) {
    search(bytes, violations.empty());
  }
  if (violations.empty()) {
    check_round_trip(*reader);
  } else if (auto contents = agdb::read_layer_contents(*reader)) {
    observe(std::uint64_t{contents->chunks.size()});
  }
  return 0;
}
