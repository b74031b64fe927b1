// Layered search: precedence, conflicts, tombstones, kind filters, f32/i8
// agreement, hybrid fusion, profile resolution, and the reference fixtures.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_search.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "support/fixture_paths.hpp"
#include "support/random.hpp"

namespace agdb_layer_search_test {

namespace agdb = agentctx::agdb;
using agdb::layer_id;

namespace {

struct test_chunk {
  std::uint32_t id;
  std::string kind;
  std::string content;
  std::vector<float> vector;
  std::vector<agdb::source_ref> sources = {};
};

// A deterministic pseudo-random stream (xorshift64*).
struct random_stream {
  std::uint64_t state;
  float next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<float>(static_cast<double>((state * 2685821657736338717ull) >> 40) / double(1 << 24)) * 2.0f -
           1.0f;
  }
};

std::vector<float> unit(std::vector<float> v) {
  float sum = 0;
  for (float x : v) sum += x * x;
  if (sum > 0) {
    for (float& x : v) x /= std::sqrt(sum);
  }
  return v;
}

std::vector<float> axis(std::size_t dim, std::size_t i, float value = 1.0f) {
  std::vector<float> v(dim, 0.0f);
  v[i] = value;
  return v;
}

agdb::layer_contents make_contents(const std::vector<test_chunk>& chunks, std::uint32_t dim,
                                   agdb::element_type type = agdb::element_type::f32,
                                   std::optional<std::string> metadata = std::nullopt) {
  agdb::layer_contents layer;
  layer.metadata_json = std::move(metadata);
  std::vector<float> all;
  for (const test_chunk& c : chunks) {
    agdb::chunk chunk;
    chunk.id = c.id;
    chunk.kind = c.kind;
    chunk.content = c.content;
    chunk.author = "human";
    chunk.confidence = 1.0f;
    chunk.created_at_unix_ms = 1700000000000;
    chunk.sources = c.sources;
    layer.chunks.push_back(std::move(chunk));
    REQUIRE(c.vector.size() == dim);
    all.insert(all.end(), c.vector.begin(), c.vector.end());
  }
  layer.embeddings.dim = dim;
  layer.embeddings.type = type;
  if (type == agdb::element_type::i8) {
    layer.embeddings.quant_scale = agdb::choose_i8_scale(all);
    layer.embeddings.i8_values = agdb::quantize_i8(all, layer.embeddings.quant_scale);
  } else {
    layer.embeddings.f32_values = std::move(all);
  }
  return layer;
}

// Writes layers into a memory file system and opens them as a stack.
struct stack_builder {
  agentctx::io::memory_file_system fs;
  std::vector<agdb::layer_location> locations;

  stack_builder& add(layer_id layer, const agdb::layer_contents& contents) {
    const std::string path = "/" + std::string(agdb::standard_file_name(layer));
    auto written = agdb::write_layer(fs, path, contents);
    INFO((written ? std::string() : written.error().describe()));
    REQUIRE(written.has_value());
    locations.push_back({layer, path, true});
    return *this;
  }
  agdb::layer_stack open() {
    auto stack = agdb::layer_stack::open(fs, locations);
    INFO((stack ? std::string() : stack.error().describe()));
    REQUIRE(stack.has_value());
    return std::move(*stack);
  }
};

std::vector<agdb::search_hit> run(const agdb::layer_stack& stack, const std::vector<float>& query,
                                  agdb::search_request request = {}) {
  request.query_vector = query;
  agdb::layer_searcher searcher(stack);
  auto hits = searcher.search(request);
  INFO((hits ? std::string() : hits.error().describe()));
  REQUIRE(hits.has_value());
  return std::move(*hits);
}

std::vector<std::pair<layer_id, std::uint32_t>> ids_of(const std::vector<agdb::search_hit>& hits) {
  std::vector<std::pair<layer_id, std::uint32_t>> out;
  for (const auto& hit : hits) out.emplace_back(hit.layer, hit.chunk.id);
  return out;
}

}  // namespace

TEST_CASE("layer names, files and sets") {
  CHECK(agdb::layer_name(layer_id::delta) == "delta");
  CHECK(agdb::standard_file_name(layer_id::local) == "AGENTS.local.db");
  CHECK(agdb::parse_layer_name("user") == layer_id::user);
  CHECK_FALSE(agdb::parse_layer_name("User").has_value());
  agdb::layer_set set;
  set.add(layer_id::base).add(layer_id::local);
  CHECK(set.contains(layer_id::base));
  CHECK_FALSE(set.contains(layer_id::user));
  const auto standard = agdb::standard_layer_locations("dir");
  REQUIRE(standard.size() == 4);
  CHECK(standard[0].path == "dir/AGENTS.db");
  CHECK(standard[3].path == "dir/AGENTS.local.db");
  CHECK_FALSE(standard[2].required);
}

TEST_CASE("a higher layer overrides the same id below and the conflict is surfaced") {
  const std::uint32_t dim = 4;
  stack_builder b;
  b.add(layer_id::base, make_contents({{7, "canonical", "base copy", axis(dim, 0)},
                                       {8, "canonical", "base only", axis(dim, 1)}},
                                      dim));
  b.add(layer_id::delta, make_contents({{7, "canonical", "delta copy", axis(dim, 2)}}, dim));
  b.add(layer_id::user, make_contents({{7, "canonical", "base copy", axis(dim, 3)}}, dim));  // same text as base
  b.add(layer_id::local, make_contents({{7, "note", "local copy", axis(dim, 1, 0.5f)}}, dim));
  const agdb::layer_stack stack = b.open();
  REQUIRE(stack.layers().size() == 4);
  CHECK(stack.layers().front().id == layer_id::local);  // highest precedence first

  SUBCASE("all layers: the local copy answers for id 7, once") {
    const auto hits = run(stack, axis(dim, 0));
    REQUIRE(hits.size() == 2);
    CHECK(ids_of(hits) == std::vector<std::pair<layer_id, std::uint32_t>>{{layer_id::local, 7}, {layer_id::base, 8}});
    CHECK(hits[0].chunk.content == "local copy");
    // The local copy points along axis 1 like chunk 8, so both score the same
    // against axis 0 (zero) ... order is by layer precedence on ties.
    CHECK(hits[0].score == doctest::Approx(0.0));
    // Conflicts: the copies below with other content (user has base's text,
    // which differs from local's too).
    REQUIRE(hits[0].conflicts.size() == 3);
    CHECK(hits[0].conflicts[0].layer == layer_id::user);
    CHECK(hits[0].conflicts[1].layer == layer_id::delta);
    CHECK(hits[0].conflicts[2].layer == layer_id::base);
    CHECK(hits[0].conflicts[2].content_sha256 == agentctx::to_hex(agentctx::sha256(std::string_view("base copy"))));
    CHECK(hits[1].conflicts.empty());
  }
  SUBCASE("a subset of layers resolves precedence within the subset") {
    agdb::search_request request;
    request.layers = agdb::layer_set().add(layer_id::base).add(layer_id::delta);
    const auto hits = run(stack, axis(dim, 2), request);
    REQUIRE(hits.size() == 2);
    CHECK(hits[0].layer == layer_id::delta);
    CHECK(hits[0].chunk.id == 7);
    CHECK(hits[0].score == doctest::Approx(1.0));
    REQUIRE(hits[0].conflicts.size() == 1);
    CHECK(hits[0].conflicts[0].layer == layer_id::base);
  }
  SUBCASE("equal content below is not a conflict") {
    agdb::search_request request;
    request.layers = agdb::layer_set().add(layer_id::base).add(layer_id::user);
    const auto hits = run(stack, axis(dim, 3), request);
    REQUIRE(hits.size() == 2);
    CHECK(hits[0].layer == layer_id::user);
    CHECK(hits[0].conflicts.empty());
  }
  SUBCASE("nothing below is touched: the base layer alone still answers with its own copy") {
    agdb::search_request request;
    request.layers = agdb::layer_set().add(layer_id::base);
    const auto hits = run(stack, axis(dim, 0), request);
    REQUIRE(hits.size() == 2);
    CHECK(hits[0].layer == layer_id::base);
    CHECK(hits[0].chunk.content == "base copy");
  }
}

TEST_CASE("tombstones hide the chunk they retract in their layer and below") {
  const std::uint32_t dim = 3;
  stack_builder b;
  b.add(layer_id::base, make_contents({{1, "canonical", "one", axis(dim, 0)},
                                       {2, "canonical", "two", axis(dim, 1)},
                                       {3, "tombstone", "", axis(dim, 1), {agdb::source_ref::to_chunk(2)}}},
                                      dim));
  b.add(layer_id::delta, make_contents({{9, "tombstone", "", axis(dim, 0), {agdb::source_ref::to_chunk(1)}}}, dim));
  b.add(layer_id::local, make_contents({{1, "canonical", "one again", axis(dim, 0)}}, dim));
  const agdb::layer_stack stack = b.open();

  SUBCASE("base alone: its own tombstone hides chunk 2; the tombstone itself is not a result") {
    agdb::search_request request;
    request.layers = agdb::layer_set().add(layer_id::base);
    CHECK(ids_of(run(stack, axis(dim, 1), request)) == std::vector<std::pair<layer_id, std::uint32_t>>{{layer_id::base, 1}});
  }
  SUBCASE("base and delta: delta's tombstone hides base's chunk 1 too") {
    agdb::search_request request;
    request.layers = agdb::layer_set().add(layer_id::base).add(layer_id::delta);
    CHECK(run(stack, axis(dim, 0), request).empty());
  }
  SUBCASE("a copy above the tombstone stays in effect") {
    const auto hits = run(stack, axis(dim, 0));
    CHECK(ids_of(hits) == std::vector<std::pair<layer_id, std::uint32_t>>{{layer_id::local, 1}});
  }
  SUBCASE("tombstones are returned when asked for by kind") {
    agdb::search_request request;
    request.kinds = agdb::kind_filter({"tombstone"});
    const auto hits = run(stack, axis(dim, 0), request);
    CHECK(ids_of(hits) ==
          std::vector<std::pair<layer_id, std::uint32_t>>{{layer_id::delta, 9}, {layer_id::base, 3}});
  }
  SUBCASE("visibility bitsets") {
    auto visible = stack.visibility(agdb::layer_set::all());
    REQUIRE(visible.has_value());
    const auto base = *stack.index_of(layer_id::base);
    CHECK_FALSE((*visible)[base].visible(0));  // chunk 1: overridden by local (and retracted)
    CHECK_FALSE((*visible)[base].visible(1));  // chunk 2: retracted in base
    CHECK((*visible)[base].visible(2));        // the tombstone record itself
    CHECK((*visible)[base].visible_count() == 1);
  }
}

TEST_CASE("kind filters: reserved kinds only when asked for") {
  const std::uint32_t dim = 2;
  stack_builder b;
  b.add(layer_id::base, make_contents({{1, "canonical", "a", axis(dim, 0)},
                                       {2, "options", "{}", axis(dim, 0)},
                                       {3, "meta.proposal_event", "p", axis(dim, 0)},
                                       {4, "note", "n", axis(dim, 0)},
                                       {5, "meta", "not reserved: no dot", axis(dim, 0)}},
                                      dim));
  const agdb::layer_stack stack = b.open();
  const auto kinds_of = [&](std::vector<std::string> filter) {
    agdb::search_request request;
    if (!filter.empty()) request.kinds = agdb::kind_filter(std::move(filter));
    std::set<std::uint32_t> ids;
    for (const auto& hit : run(stack, axis(dim, 0), request)) ids.insert(hit.chunk.id);
    return ids;
  };
  CHECK(kinds_of({}) == std::set<std::uint32_t>{1, 4, 5});
  CHECK(kinds_of({"options"}) == std::set<std::uint32_t>{2});
  CHECK(kinds_of({"meta.*"}) == std::set<std::uint32_t>{3});
  CHECK(kinds_of({"meta.proposal_event", "canonical"}) == std::set<std::uint32_t>{1, 3});
  CHECK(kinds_of({"note"}) == std::set<std::uint32_t>{4});
  CHECK(kinds_of({"nothing"}).empty());
  CHECK(agdb::kind_filter::is_reserved("meta.x"));
  CHECK_FALSE(agdb::kind_filter::is_reserved("metadata"));
}

TEST_CASE("top-k equals a full sort; ties by precedence then file order; i8 agrees with f32") {
  const std::uint32_t dim = 48;
  random_stream random{0x9E3779B97F4A7C15ull};
  std::vector<test_chunk> base_chunks, user_chunks;
  for (std::uint32_t i = 0; i < 300; ++i) {
    std::vector<float> v(dim);
    for (float& x : v) x = random.next();
    (i % 3 == 0 ? user_chunks : base_chunks).push_back({1000 + i, "canonical", "c" + std::to_string(i), unit(v)});
  }
  std::vector<float> query(dim);
  for (float& x : query) x = random.next();

  for (const auto type : {agdb::element_type::f32, agdb::element_type::i8}) {
    CAPTURE(static_cast<int>(type));
    stack_builder b;
    b.add(layer_id::base, make_contents(base_chunks, dim, type));
    b.add(layer_id::user, make_contents(user_chunks, dim, type));
    const agdb::layer_stack stack = b.open();
    agdb::search_request request;
    request.k = 10;
    const auto hits = run(stack, query, request);
    REQUIRE(hits.size() == 10);
    for (std::size_t i = 1; i < hits.size(); ++i) CHECK(hits[i - 1].score >= hits[i].score);

    // Exact f32 ranking by brute force.
    std::vector<std::pair<double, std::uint32_t>> exact;
    const auto qn = unit(query);
    for (const auto* list : {&base_chunks, &user_chunks}) {
      for (const auto& c : *list) {
        double dot = 0;
        for (std::size_t j = 0; j < dim; ++j) dot += double(qn[j]) * double(c.vector[j]);
        exact.emplace_back(dot, c.id);
      }
    }
    std::sort(exact.begin(), exact.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::set<std::uint32_t> truth;
    for (std::size_t i = 0; i < 10; ++i) truth.insert(exact[i].second);
    std::size_t found = 0;
    for (const auto& hit : hits) found += truth.count(hit.chunk.id);
    if (type == agdb::element_type::f32) {
      CHECK(found == 10);
      CHECK(hits[0].score == doctest::Approx(exact[0].first).epsilon(1e-4));
    } else {
      CHECK(found >= 9);  // recall@10 of the quantised layer
      CHECK(hits[0].score == doctest::Approx(exact[0].first).epsilon(0.03));
    }
  }

  SUBCASE("equal scores: higher layer first, then file order") {
    stack_builder b;
    b.add(layer_id::base, make_contents({{5, "canonical", "x", axis(4, 0)}, {3, "canonical", "y", axis(4, 0)}}, 4));
    b.add(layer_id::delta, make_contents({{9, "canonical", "z", axis(4, 0)}}, 4));
    const agdb::layer_stack stack = b.open();
    CHECK(ids_of(run(stack, axis(4, 0))) == std::vector<std::pair<layer_id, std::uint32_t>>{
                                               {layer_id::delta, 9}, {layer_id::base, 5}, {layer_id::base, 3}});
  }
}

TEST_CASE("cosine and dot metrics; zero rows score 0") {
  const std::uint32_t dim = 2;
  stack_builder b;
  b.add(layer_id::base, make_contents({{1, "canonical", "long", {3.0f, 0.0f}},
                                       {2, "canonical", "diagonal", {0.6f, 0.8f}},
                                       {3, "canonical", "zero", {0.0f, 0.0f}}},
                                      dim));
  const agdb::layer_stack stack = b.open();
  const std::vector<float> query = {2.0f, 0.0f};
  const auto cosine = run(stack, query);
  REQUIRE(cosine.size() == 3);
  CHECK(cosine[0].chunk.id == 1);
  CHECK(cosine[0].score == doctest::Approx(1.0));
  CHECK(cosine[1].score == doctest::Approx(0.6));
  CHECK(cosine[2].score == doctest::Approx(0.0));
  agdb::search_request request;
  request.metric = agdb::similarity_metric::dot;
  const auto dot = run(stack, query, request);
  CHECK(dot[0].score == doctest::Approx(6.0));
  CHECK(dot[1].score == doctest::Approx(1.2));
}

TEST_CASE("hybrid search fuses BM25 with the vector ranking but never resurrects an overridden copy") {
  const std::uint32_t dim = 4;
  stack_builder b;
  b.add(layer_id::base, make_contents({{1, "canonical", "the zebra crossing rules", axis(dim, 1)},
                                       {2, "canonical", "unrelated text about lions", axis(dim, 0)},
                                       {3, "canonical", "zebra zebra zebra", axis(dim, 2)}},
                                      dim));
  b.add(layer_id::user, make_contents({{3, "canonical", "nothing striped here", axis(dim, 3)}}, dim));
  const agdb::layer_stack stack = b.open();
  agdb::search_request request;
  request.mode = agdb::search_mode::hybrid;
  request.query_text = "Zebra";
  request.k = 3;
  const auto hits = run(stack, axis(dim, 0), request);
  REQUIRE(hits.size() == 3);
  // Chunk 1 is first in the lexical ranking (base's chunk 3 is overridden and
  // the user copy has no "zebra"), chunk 2 first in the vector ranking: both
  // fuse to 1/61 + 1/(60 + r) with r their rank in the other list.
  std::set<std::uint32_t> ids;
  for (const auto& hit : hits) ids.insert(hit.chunk.id);
  CHECK(ids == std::set<std::uint32_t>{1, 2, 3});
  for (const auto& hit : hits) {
    if (hit.chunk.id == 3) {
      CHECK(hit.layer == layer_id::user);
      CHECK(hit.lexical_score == doctest::Approx(0.0));
    }
    if (hit.chunk.id == 1) CHECK(*hit.lexical_score > 0.0);
    CHECK(hit.lexical_score.has_value());
  }
  CHECK(hits[0].score >= hits[1].score);
}

TEST_CASE("BM25 tokens and scores") {
  std::vector<std::string> tokens;
  agdb::for_each_lexical_token("Hello, wörld! a-b_c 42x", [&](std::string_view t) { tokens.emplace_back(t); });
  CHECK(tokens == std::vector<std::string>{"Hello", "wörld", "a", "b", "c", "42x"});
  agdb::bm25_query query("ZEBRA zebra lion");
  CHECK(query.terms() == std::vector<std::string>{"zebra", "lion"});
  std::vector<std::uint32_t> f1(2), f2(2), f3(2);
  const auto l1 = query.add_document("zebra zebra", f1);
  const auto l2 = query.add_document("a lion and a Zebra here", f2);
  const auto l3 = query.add_document("nothing", f3);
  CHECK(f1 == std::vector<std::uint32_t>{2, 0});
  CHECK(f2 == std::vector<std::uint32_t>{1, 1});
  CHECK(l2 == 6);
  CHECK(query.score(f3, l3) == 0.0);
  CHECK(query.score(f2, l2) > query.score(f1, l1));  // the rarer term "lion" matters more
  CHECK(agdb::bm25_query("  ,, ").empty());
}

TEST_CASE("BM25 tokens: the 64-byte blocks give the tokens a byte-by-byte scan gives") {
  // The oracle: the definition read literally, one byte at a time.
  const auto expected = [](std::string_view text) {
    const auto word = [](unsigned char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
    };
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && !word(static_cast<unsigned char>(text[i]))) ++i;
      const std::size_t start = i;
      while (i < text.size() && word(static_cast<unsigned char>(text[i]))) ++i;
      if (i > start) out.push_back(text.substr(start, i - start));
    }
    return out;
  };
  const auto tokens = [](std::string_view text) {
    std::vector<std::string_view> out;
    agdb::for_each_lexical_token(text, [&](std::string_view t) { out.push_back(t); });
    return out;
  };
  // Every byte value, alone and in runs across block edges.
  for (int c = 0; c < 256; ++c) {
    for (std::size_t length : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65}, std::size_t{129}}) {
      const std::string run(length, static_cast<char>(c));
      CAPTURE(c);
      CAPTURE(length);
      CHECK(tokens(run) == expected(run));
      const std::string framed = "x " + run + " y";
      CHECK(tokens(framed) == expected(framed));
    }
  }
  // Random texts of word and separator bytes, tokens of every length, at
  // every offset from a block edge (the views must point into the text).
  std::mt19937_64 random(7);
  const std::string alphabet = std::string("aZ09 ,.-_@[`{/:\t\n") + "\x7f\x80\xff\xc3\xa9";
  for (int round = 0; round < 3000; ++round) {
    std::string text(random() % 300, ' ');
    for (char& c : text) {
      c = random() % 5 == 0 ? static_cast<char>(random()) : alphabet[random() % alphabet.size()];
    }
    const auto got = tokens(text);
    const auto want = expected(text);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].data() == want[i].data());
      CHECK(got[i].size() == want[i].size());
    }
  }
  // The vector mask and the scalar one agree on every block.
  for (int round = 0; round < 2000; ++round) {
    char block[64];
    for (char& c : block) c = static_cast<char>(random());
    CHECK(agdb::detail::word_byte_mask(block) == agdb::detail::word_byte_mask_scalar(block));
  }
  CHECK(tokens("").empty());
}

TEST_CASE("BM25 counts: the block scan counts what comparing every token with every term counts") {
  // The oracle: count_terms_by_definition, every token compared with every
  // term, itself checked by hand first.
  {
    const agdb::bm25_query query("zebra LION");
    std::vector<std::uint32_t> counted(2, 9);
    CHECK(query.count_terms_by_definition("Zebra, zebras LION lion-zebra_x caf\xc3\xa9 ZEBRA", counted) == 8);
    CHECK(counted == std::vector<std::uint32_t>{3, 2});
  }
  const auto expected = [](const agdb::bm25_query& query, std::string_view text, std::vector<std::uint32_t>& frequencies) {
    frequencies.assign(query.terms().size(), 0);
    return query.count_terms_by_definition(text, frequencies);
  };
  // Pieces: words that share first bytes or prefixes with the terms, in both
  // cases, digits, non-ASCII words (UTF-8 and lone high bytes), separators.
  const std::vector<std::string> pieces = {
      "a",     "A",      "ab",   "AB",     "aB",   "abc",     "abcd",  "b",     "ba",     "x1",    "X1",
      "1",     "12",     "123",  "0",      "caf\xc3\xa9", "CAF\xc3\xa9", "\xc3\xa9t\xc3\xa9", "\xff", "\x80",
      "zebra", "ZeBrA",  "zebras", "zeb",  "lion", " ",      "  ",    ",",     "-",      "_",     "\n",
      ".",     "@",      "[",    "`",      "{",    "\t",      "\x01",  "\x7f",  "/",      ":"};
  const std::vector<std::string> queries = {
      "a",         "ab abc",    "A b",         "x1 1 12",    "caf\xc3\xa9",      "\xc3\xa9t\xc3\xa9 \xff",
      "zebra lion", "ZEBRA zeb", "0 123 abcd",  "ba ab a b", "\x80",             "zebras zebra zeb lion ab a 1"};
  test_support::random_stream random(0x5eed0b25ULL);
  std::vector<std::uint32_t> want, got;
  std::size_t checked = 0;
  for (const std::string& q : queries) {
    agdb::bm25_query query(q);
    REQUIRE_FALSE(query.empty());
    for (int round = 0; round < 400; ++round) {
      // Lengths around every block edge: 0..300 bytes.
      std::string text;
      const std::size_t target = random.below(301);
      while (text.size() < target) text += pieces[random.below(pieces.size())];
      CAPTURE(q);
      CAPTURE(text);
      got.assign(query.terms().size(), 7);  // overwritten
      const std::uint32_t length = query.count_terms(text, got);
      CHECK(length == expected(query, text, want));
      CHECK(got == want);
      ++checked;
    }
  }
  CHECK(checked == 400 * queries.size());
  // The same through add_document: counts, length and the statistics it adds.
  agdb::bm25_query query("zebra lion");
  std::vector<std::uint32_t> f(2);
  CHECK(query.add_document(std::string(200, ' ') + "Zebra" + std::string(59, '-') + "zebra lion", f) == 3);
  CHECK(f == std::vector<std::uint32_t>{2, 1});
  CHECK(query.document_count() == 1);
}

TEST_CASE("scoring large layers on two threads gives the same results") {
  const std::uint32_t dim = 384;
  random_stream random{42};
  std::vector<test_chunk> chunks;
  for (std::uint32_t i = 0; i < 3000; ++i) {  // 1.15M values: above the parallel threshold
    std::vector<float> v(dim);
    for (float& x : v) x = random.next();
    chunks.push_back({i + 1, "canonical", "c", v});
  }
  std::vector<float> query(dim);
  for (float& x : query) x = random.next();
  stack_builder b;
  b.add(layer_id::base, make_contents(chunks, dim));
  const agdb::layer_stack stack = b.open();
  agdb::search_request one;
  one.k = 25;
  agdb::search_request two = one;
  two.threads = 2;
  const auto a = run(stack, query, one);
  const auto c = run(stack, query, two);
  CHECK(ids_of(a) == ids_of(c));
}

TEST_CASE("search errors") {
  stack_builder b;
  b.add(layer_id::base, make_contents({{1, "canonical", "a", axis(3, 0)}}, 3));
  const agdb::layer_stack stack = b.open();
  agdb::layer_searcher searcher(stack);
  const std::vector<float> good = axis(3, 0);
  const std::vector<float> short_vector = axis(2, 0);
  const std::vector<float> nan_vector = {1.0f, std::nanf(""), 0.0f};
  struct bad_case {
    const char* name;
    agdb::search_request request;
    agentctx::errc code;
  };
  std::vector<bad_case> cases;
  cases.push_back({"k = 0", {}, agentctx::errc::invalid_argument});
  cases.back().request.k = 0;
  cases.push_back({"k too large", {}, agentctx::errc::invalid_argument});
  cases.back().request.k = agdb::search_request::max_k + 1;
  cases.push_back({"wrong dimension", {}, agentctx::errc::invalid_argument});
  cases.back().request.query_vector = short_vector;
  cases.push_back({"non-finite query", {}, agentctx::errc::invalid_argument});
  cases.back().request.query_vector = nan_vector;
  cases.push_back({"hybrid without text", {}, agentctx::errc::invalid_argument});
  cases.back().request.mode = agdb::search_mode::hybrid;
  cases.push_back({"no selected layer present", {}, agentctx::errc::not_found});
  cases.back().request.layers = agdb::layer_set().add(layer_id::local);
  for (auto& c : cases) {
    CAPTURE(c.name);
    if (c.request.query_vector.empty()) c.request.query_vector = good;
    auto hits = searcher.search(c.request);
    REQUIRE_FALSE(hits.has_value());
    CHECK(hits.error().code == c.code);
  }
}

TEST_CASE("stack errors: duplicate layer, mixed dimensions, missing files") {
  stack_builder b;
  b.add(layer_id::base, make_contents({{1, "canonical", "a", axis(3, 0)}}, 3));
  b.add(layer_id::user, make_contents({{1, "canonical", "a", axis(4, 0)}}, 4));
  auto mixed = agdb::layer_stack::open(b.fs, b.locations);
  REQUIRE_FALSE(mixed.has_value());
  CHECK(mixed.error().code == agentctx::errc::incompatible);
  CHECK(mixed.error().message == "layer base has 3-dimensional embeddings but layer user (/AGENTS.user.db) has 4");

  auto twice = agdb::layer_stack::open(b.fs, {{layer_id::base, "/AGENTS.db", true}, {layer_id::base, "/AGENTS.db", true}});
  REQUIRE_FALSE(twice.has_value());
  CHECK(twice.error().code == agentctx::errc::invalid_argument);

  auto missing_required = agdb::layer_stack::open(b.fs, {{layer_id::local, "/nope.db", true}});
  REQUIRE_FALSE(missing_required.has_value());
  CHECK(missing_required.error().code == agentctx::errc::not_found);

  auto missing_optional = agdb::layer_stack::open(b.fs, {{layer_id::base, "/AGENTS.db", false},
                                                        {layer_id::local, "/nope.db", false}});
  REQUIRE(missing_optional.has_value());
  CHECK(missing_optional->layers().size() == 1);
}

TEST_CASE("stack errors: a dim beyond max_dim, a metadata profile of another dim") {
  SUBCASE("a layer of no rows may declare any dim; above max_dim it is refused before any query allocates it") {
    for (const std::uint32_t dim : {agdb::layer_stack::max_dim + 1, std::uint32_t{0x7D000002}}) {
      CAPTURE(dim);
      stack_builder b;
      b.add(layer_id::base, make_contents({}, dim));
      auto stack = agdb::layer_stack::open(b.fs, b.locations);
      REQUIRE_FALSE(stack.has_value());
      CHECK(stack.error().code == agentctx::errc::invalid_value);
      CHECK(stack.error().message ==
            "the embedding matrix has dim " + std::to_string(dim) + "; search supports at most 65536");
      CHECK(stack.error().path == "/AGENTS.db");
    }
    stack_builder at_limit;
    at_limit.add(layer_id::base, make_contents({}, agdb::layer_stack::max_dim));
    CHECK(agdb::layer_stack::open(at_limit.fs, at_limit.locations).has_value());
  }
  SUBCASE("the profile in the metadata must describe the matrix") {
    const agdb::embedding_profile hash8{"hash", std::nullopt, std::nullopt, 8, "none"};
    stack_builder b;
    b.add(layer_id::base, make_contents({{1, "canonical", "a", axis(4, 0)}}, 4, agdb::element_type::f32,
                                        agdb::layer_metadata_json(hash8, "test", "1")));
    auto stack = agdb::layer_stack::open(b.fs, b.locations);
    REQUIRE_FALSE(stack.has_value());
    CHECK(stack.error().code == agentctx::errc::incompatible);
    CHECK(stack.error().message ==
          "the layer metadata's embedding profile has dim 8 but the embedding matrix has dim 4");
  }
}

TEST_CASE("profile resolution") {
  const std::uint32_t dim = 8;
  const agdb::embedding_profile hash8{"hash", std::nullopt, std::nullopt, dim, "none"};
  const agdb::embedding_profile model8{"candle", "all-minilm-l6-v2", "main", dim, "none"};
  const auto metadata = [](const agdb::embedding_profile& p) { return agdb::layer_metadata_json(p, "test", "1"); };
  const std::vector<test_chunk> one = {{1, "canonical", "a", axis(dim, 0)}};

  SUBCASE("no metadata anywhere: hash at the layers' dimension, with a warning") {
    stack_builder b;
    b.add(layer_id::base, make_contents(one, dim));
    auto resolved = agdb::resolve_embedding_profile(b.open(), agdb::layer_set::all(), std::nullopt);
    REQUIRE(resolved.has_value());
    CHECK(resolved->profile == hash8);
    CHECK_FALSE(resolved->configured);
    REQUIRE(resolved->warnings.size() == 1);
    CHECK(resolved->warnings[0].find("no selected layer records an embedding profile") != std::string::npos);
  }
  SUBCASE("the recorded profile is the active one; a layer without metadata warns") {
    stack_builder b;
    b.add(layer_id::base, make_contents(one, dim));
    b.add(layer_id::delta, make_contents(one, dim, agdb::element_type::f32, metadata(model8)));
    const agdb::layer_stack stack = b.open();
    auto resolved = agdb::resolve_embedding_profile(stack, agdb::layer_set::all(), std::nullopt);
    REQUIRE(resolved.has_value());
    CHECK(resolved->profile == model8);
    REQUIRE(resolved->warnings.size() == 1);
    CHECK(resolved->warnings[0].find("layer base") != std::string::npos);
    // The configured hash embedder does not match the delta's model.
    auto mismatch = agdb::resolve_embedding_profile(stack, agdb::layer_set::all(), hash8);
    REQUIRE_FALSE(mismatch.has_value());
    CHECK(mismatch.error().code == agentctx::errc::incompatible);
    CHECK(mismatch.error().message.find(agdb::describe(model8)) != std::string::npos);
    CHECK(mismatch.error().message.find(agdb::describe(hash8)) != std::string::npos);
    // Searching only base with it is fine.
    auto base_only = agdb::resolve_embedding_profile(stack, agdb::layer_set().add(layer_id::base), hash8);
    CHECK(base_only.has_value());
  }
  SUBCASE("two layers with different profiles") {
    stack_builder b;
    b.add(layer_id::base, make_contents(one, dim, agdb::element_type::f32, metadata(hash8)));
    b.add(layer_id::local, make_contents(one, dim, agdb::element_type::f32, metadata(model8)));
    auto resolved = agdb::resolve_embedding_profile(b.open(), agdb::layer_set::all(), std::nullopt);
    REQUIRE_FALSE(resolved.has_value());
    CHECK(resolved.error().code == agentctx::errc::incompatible);
    CHECK(resolved.error().message.find("layer base") != std::string::npos);
    CHECK(resolved.error().message.find("layer local") != std::string::npos);
  }
  SUBCASE("a configured profile of another dimension") {
    stack_builder b;
    b.add(layer_id::base, make_contents(one, dim));
    auto resolved = agdb::resolve_embedding_profile(b.open(), agdb::layer_set::all(),
                                                    agdb::embedding_profile{"hash", {}, {}, 16, "none"});
    REQUIRE_FALSE(resolved.has_value());
    CHECK(resolved.error().code == agentctx::errc::incompatible);
  }
}

TEST_CASE("the reference fixture AGENTS.db: a chunk's exact content finds that chunk first") {
  const std::string dir = test_support::agdb_fixture_dir();
  auto stack = agdb::layer_stack::open(agentctx::io::default_file_system(),
                                       {{layer_id::base, dir + "/AGENTS.db", false},
                                        {layer_id::delta, dir + "/AGENTS.delta.db", false}});
  REQUIRE(stack.has_value());
  if (stack->layers().size() != 2) {
    MESSAGE("skipping: fixtures not found in " << dir);
    return;
  }
  const auto base_index = *stack->index_of(layer_id::base);
  const agdb::layer_reader& base = stack->layers()[base_index].reader;
  agdb::hash_embedder embedder(384);
  const agdb::layer_set base_only = agdb::layer_set().add(layer_id::base);
  auto visible = stack->visibility(base_only);
  REQUIRE(visible.has_value());

  // The fixture's tombstone retracts one base chunk.
  std::optional<std::uint32_t> retracted;
  for (std::size_t i = 0; i < base.chunk_count(); ++i) {
    auto chunk = base.chunk(i);
    REQUIRE(chunk.has_value());
    if (chunk->kind != "tombstone") continue;
    auto sources = base.sources(*chunk);
    REQUIRE(sources.has_value());
    for (const auto& s : *sources) {
      if (s.kind == agdb::relationship_kind::source_chunk_id) retracted = s.chunk_id;
    }
  }
  REQUIRE(retracted.has_value());
  CHECK_FALSE((*visible)[base_index].visible(*base.find_chunk(*retracted)));

  agdb::layer_searcher searcher(*stack);
  std::size_t checked = 0;
  for (std::size_t i = 0; i < base.chunk_count(); ++i) {
    auto chunk = base.chunk(i);
    REQUIRE(chunk.has_value());
    if (chunk->kind != "canonical" || chunk->id == *retracted) continue;
    std::vector<float> query(384);
    const std::string_view text = chunk->content;
    REQUIRE(embedder.embed(std::span(&text, 1), query).has_value());
    agdb::search_request request;
    request.query_vector = query;
    request.layers = base_only;
    request.k = 3;
    auto hits = searcher.search(request);
    REQUIRE(hits.has_value());
    REQUIRE_FALSE(hits->empty());
    CAPTURE(chunk->id);
    CHECK((*hits)[0].chunk.id == chunk->id);
    CHECK((*hits)[0].score == doctest::Approx(1.0).epsilon(1e-5));
    for (const auto& hit : *hits) CHECK(hit.chunk.id != *retracted);
    ++checked;
  }
  CHECK(checked >= 8);  // 9 canonical chunks, at most one of them retracted

  // A text query against the delta needs its candle model: the hash
  // embedder is refused, naming both profiles.
  auto mismatch = agdb::resolve_embedding_profile(*stack, agdb::layer_set::all(),
                                                  agdb::embedding_profile{"hash", {}, {}, 384, "none"});
  REQUIRE_FALSE(mismatch.has_value());
  CHECK(mismatch.error().code == agentctx::errc::incompatible);
  CHECK(mismatch.error().message.find("candle:all-minilm-l6-v2@main(dim=384, norm=none)") != std::string::npos);
}

}  // namespace agdb_layer_search_test
