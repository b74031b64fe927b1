#include <doctest/doctest.h>

#include "support/fixture_paths.hpp"

#include <array>
#include <cstddef>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "support/result_checks.hpp"

namespace agdb_hash_embedder_test {

namespace agdb = agentctx::agdb;

namespace {

std::vector<float> embed(std::string_view text, std::size_t dim) {
  std::vector<float> out(dim, 42.0f);  // hash_embed must overwrite every element
  agdb::hash_embed(text, out);
  return out;
}

// The embedding of a text made of exactly one token: +-1 in one bucket.
std::vector<float> one_token_embedding(std::string_view token, std::size_t dim) {
  std::vector<float> expected(dim, 0.0f);
  const std::uint32_t h = agdb::fnv1a32(token);
  expected[h % dim] = (h & 0x80000000u) != 0 ? -1.0f : 1.0f;
  return expected;
}

}  // namespace

TEST_CASE("fnv1a32 matches the published FNV-1a 32-bit vectors") {
  CHECK(agdb::fnv1a32("") == 0x811c9dc5u);
  CHECK(agdb::fnv1a32("a") == 0xe40c292cu);
  CHECK(agdb::fnv1a32("foobar") == 0xbf9cf968u);
  CHECK(agdb::fnv1a32("hello") == 0x4f9f2cabu);
  static_assert(agdb::fnv1a32("hello") == 0x4f9f2cabu);
}

TEST_CASE("hash_embed reproduces the reference vectors") {
  CHECK(embed("hello world", 8) == std::vector<float>{0, 0, 0, 1, 0, 0, 0, 0});

  const std::vector<float> xyz = embed("x y z", 16);
  for (std::size_t i = 0; i < xyz.size(); ++i) {
    CAPTURE(i);
    if (i == 4 || i == 7 || i == 13) {
      CHECK(std::bit_cast<std::uint32_t>(xyz[i]) == 0xbf13cd3au);
    } else {
      CHECK(std::bit_cast<std::uint32_t>(xyz[i]) == 0u);  // +0.0f, not -0.0f
    }
  }
}

TEST_CASE("text without tokens embeds to the zero vector") {
  for (const std::string_view text : {std::string_view(""), std::string_view(" \t\r\n\v\f"),
                                      std::string_view("\xC2\xA0\xE3\x80\x80\xE2\x80\xA8  \xC2\x85")}) {
    CAPTURE(text);
    for (const float x : embed(text, 32)) CHECK(std::bit_cast<std::uint32_t>(x) == 0u);
  }
}

TEST_CASE("tokens split on exactly the Unicode White_Space code points") {
  struct row {
    const char* name;
    std::string_view separator;
    bool splits;
  };
  const std::vector<row> rows = {
      {"U+0009 tab", "\t", true},
      {"U+000A line feed", "\n", true},
      {"U+000B vertical tab", "\v", true},
      {"U+000C form feed", "\f", true},
      {"U+000D carriage return", "\r", true},
      {"U+0020 space", " ", true},
      {"U+0085 next line", "\xC2\x85", true},
      {"U+00A0 no-break space", "\xC2\xA0", true},
      {"U+1680 ogham space mark", "\xE1\x9A\x80", true},
      {"U+2000 en quad", "\xE2\x80\x80", true},
      {"U+2005 four-per-em space", "\xE2\x80\x85", true},
      {"U+200A hair space", "\xE2\x80\x8A", true},
      {"U+2028 line separator", "\xE2\x80\xA8", true},
      {"U+2029 paragraph separator", "\xE2\x80\xA9", true},
      {"U+202F narrow no-break space", "\xE2\x80\xAF", true},
      {"U+205F medium mathematical space", "\xE2\x81\x9F", true},
      {"U+3000 ideographic space", "\xE3\x80\x80", true},
      // Not White_Space, although some splitters treat them as separators.
      {"U+0000 nul", std::string_view("\0", 1), false},
      {"U+0008 backspace", "\b", false},
      {"U+001C file separator", "\x1C", false},
      {"U+001F unit separator", "\x1F", false},
      {"U+00A1 inverted exclamation", "\xC2\xA1", false},
      {"U+0084", "\xC2\x84", false},
      {"U+1681 ogham letter beith", "\xE1\x9A\x81", false},
      {"U+180E mongolian vowel separator", "\xE1\xA0\x8E", false},
      {"U+200B zero width space", "\xE2\x80\x8B", false},
      {"U+2027 hyphenation point", "\xE2\x80\xA7", false},
      {"U+2030 per mille", "\xE2\x80\xB0", false},
      {"U+2060 word joiner", "\xE2\x81\xA0", false},
      {"U+3001 ideographic comma", "\xE3\x80\x81", false},
      {"U+FEFF byte order mark", "\xEF\xBB\xBF", false},
  };
  for (const row& r : rows) {
    CAPTURE(r.name);
    const std::string joined = "alpha" + std::string(r.separator) + "beta";
    if (r.splits) {
      CHECK(embed(joined, 1024) == embed("alpha beta", 1024));
      CHECK(embed(std::string(r.separator) + "alpha" + std::string(r.separator), 1024) ==
            one_token_embedding("alpha", 1024));
    } else {
      CHECK(embed(joined, 1024) == one_token_embedding(joined, 1024));
    }
  }
}

TEST_CASE("empty tokens are dropped and bytes are kept as they are") {
  CHECK(embed("  a\t\n\nb  c ", 1024) == embed("a b c", 1024));
  CHECK(embed("\xE3\x80\x80x\xC2\xA0\xC2\xA0y\xE2\x80\xA9", 1024) == embed("x y", 1024));
  // No case folding, no punctuation stripping.
  CHECK(embed("Hello, World!", 1024) == embed("World! Hello,", 1024));
  CHECK(embed("Hello, World!", 1024) != embed("hello world", 1024));
  // Invalid or truncated UTF-8 never separates: such bytes belong to tokens.
  for (const std::string_view token : {std::string_view("a\xE2\x80"), std::string_view("a\xC2"),
                                       std::string_view("\x80\xA0"), std::string_view("\xE2\x80\xA8" "\x80").substr(1)}) {
    CAPTURE(token);
    CHECK(embed(token, 1024) == one_token_embedding(token, 1024));
  }
  // A space right after a stray lead byte still separates.
  CHECK(embed("\xE2\xE2\x80\x80z", 1024) == embed("\xE2 z", 1024));
}

TEST_CASE("any_token gives the tokens whose hashes for_each_token_hash gives, and stops when asked") {
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "word" + std::to_string(i) + (i % 3 == 0 ? "\t" : " ");
  for (const std::string_view text :
       {std::string_view("  a\t\n\nb  c "), std::string_view("\xE3\x80\x80x\xC2\xA0\xC2\xA0y\xE2\x80\xA9"),
        std::string_view("Hello, World!"), std::string_view("\xE2\xE2\x80\x80z a\xE2\x80"), std::string_view(""),
        std::string_view(long_text)}) {
    CAPTURE(text);
    std::vector<std::uint32_t> hashes, of_tokens;
    agentctx::agdb::for_each_token_hash(text, [&](std::uint32_t h) { hashes.push_back(h); });
    CHECK_FALSE(agentctx::agdb::any_token(text, [&](std::string_view token) {
      CHECK_FALSE(token.empty());
      of_tokens.push_back(agentctx::agdb::fnv1a32(token));
      return false;
    }));
    CHECK(of_tokens == hashes);
  }
  std::vector<std::string_view> seen;
  CHECK(agentctx::agdb::any_token("a bb ccc", [&](std::string_view token) {
    seen.push_back(token);
    return token == "bb";
  }));
  CHECK(seen == std::vector<std::string_view>{"a", "bb"});
}

TEST_CASE("hash_embed accumulates signed counts and normalises to unit length") {
  // A repeated token lands in one bucket: the normalised value is exactly +-1.
  CHECK(embed("tok tok tok", 16) == one_token_embedding("tok", 16));

  // Any text with tokens has unit norm.
  const std::vector<float> text = embed("the quick brown fox jumps over the lazy dog", 7);
  double norm = 0;
  for (const float x : text) norm += double(x) * x;
  CHECK(norm == doctest::Approx(1.0).epsilon(1e-6));

  // dim 0: nothing to write, nothing to fail.
  agdb::hash_embed("anything", std::span<float>());
}

TEST_CASE("normalisation rounds every square to f32, as the reference does") {
  // 4099^2 = 16801801 is not an f32: summing the rounded square (16801800)
  // and summing a fused multiply-add's exact square give different bits.
  std::array<float, 2> values = {37.0f, 4099.0f};
  agdb::l2_normalize_like_reference(values);
  CHECK(std::bit_cast<std::uint32_t>(values[0]) == 0x3c13e2bcu);  // fused: 0x3c13e2ba
  CHECK(std::bit_cast<std::uint32_t>(values[1]) == 0x3f7ffd57u);  // fused: 0x3f7ffd55

  std::array<float, 3> zeros = {0.0f, 0.0f, 0.0f};
  agdb::l2_normalize_like_reference(zeros);
  for (const float x : zeros) CHECK(std::bit_cast<std::uint32_t>(x) == 0u);
}

TEST_CASE("hash_embedder embeds batches row by row") {
  agdb::hash_embedder embedder;
  CHECK(embedder.profile() == agdb::embedding_profile{"hash", std::nullopt, std::nullopt, 128, "none"});
  CHECK(agdb::hash_embedder(384).profile().dim == 384u);

  const std::array<std::string_view, 3> texts = {"hello world", "", "x y z"};
  std::vector<float> out(3 * 128, 7.0f);
  REQUIRE(embedder.embed(texts, out).has_value());
  for (std::size_t row = 0; row < texts.size(); ++row) {
    CAPTURE(row);
    const std::vector<float> expected = embed(texts[row], 128);
    CHECK(std::vector<float>(out.begin() + std::ptrdiff_t(row * 128), out.begin() + std::ptrdiff_t((row + 1) * 128)) ==
          expected);
  }

  std::vector<float> empty;
  CHECK(embedder.embed(std::span<const std::string_view>(), empty).has_value());

  std::vector<float> short_out(2 * 128);
  const auto wrong_size = embedder.embed(texts, short_out);
  REQUIRE_FALSE(wrong_size.has_value());
  CHECK(wrong_size.error().code == agentctx::errc::invalid_argument);

  agdb::hash_embedder zero_dim(0);
  const auto zero = zero_dim.embed(texts, empty);
  REQUIRE_FALSE(zero.has_value());
  CHECK(zero.error().code == agentctx::errc::invalid_argument);
}

// ---- reference fixtures ------------------------------------------------------

namespace {

// Opens a reference fixture from $AGENTCTX_AGDB_FIXTURES, else from the
// build's AGENTCTX_SHARED_FIXTURES + "/agdb"; nullopt, saying so, when absent.
std::optional<agdb::layer_reader> open_reference_fixture(const std::string& name) {
  const std::string directory = test_support::agdb_fixture_dir();
  std::error_code ignored;
  if (!std::filesystem::is_directory(directory, ignored)) {
    MESSAGE("skipping: AGDB reference fixtures not found at " << directory << " (set AGENTCTX_AGDB_FIXTURES)");
    return std::nullopt;
  }
  auto reader = agdb::layer_reader::open(directory + "/" + name);
  REQUIRE_MESSAGE(reader.has_value(), test_support::error_text(reader));
  return std::move(*reader);
}

}  // namespace

TEST_CASE("hash_embed matches the reference's rows in AGENTS.db bit for bit") {
  const auto reader = open_reference_fixture("AGENTS.db");
  if (!reader) return;
  auto contents = agdb::read_layer_contents(*reader);
  REQUIRE_MESSAGE(contents.has_value(), test_support::error_text(contents));
  const agdb::embedding_matrix& matrix = contents->embeddings;
  REQUIRE(matrix.type == agdb::element_type::f32);
  REQUIRE(matrix.dim == 384u);
  REQUIRE(contents->chunks.size() == 12u);
  REQUIRE(matrix.f32_values.size() == contents->chunks.size() * 384u);

  std::size_t matching_rows = 0;
  std::size_t canonical_chunks = 0;
  std::size_t zero_options_rows = 0;
  std::vector<float> ours(384);
  for (std::size_t i = 0; i < contents->chunks.size(); ++i) {
    const agdb::chunk& chunk = contents->chunks[i];
    CAPTURE(chunk.id);
    CAPTURE(chunk.kind);
    agdb::hash_embed(chunk.content, ours);
    const std::span<const float> stored(matrix.f32_values.data() + i * 384, 384);
    bool bits_equal = true;
    bool stored_zero = true;
    for (std::size_t k = 0; k < 384; ++k) {
      bits_equal = bits_equal && std::bit_cast<std::uint32_t>(ours[k]) == std::bit_cast<std::uint32_t>(stored[k]);
      stored_zero = stored_zero && std::bit_cast<std::uint32_t>(stored[k]) == 0u;
    }
    matching_rows += bits_equal ? 1 : 0;
    if (chunk.kind == "canonical") {
      ++canonical_chunks;
      CHECK(bits_equal);
    } else if (chunk.kind == "options") {
      CHECK(stored_zero);
      zero_options_rows += stored_zero ? 1 : 0;
    } else {
      CHECK(chunk.kind == "tombstone");
    }
  }
  CHECK(canonical_chunks == 9u);
  CHECK(matching_rows == 9u);  // exactly the canonical ones: the tombstone's row is another chunk's
  CHECK(zero_options_rows == 2u);
}

TEST_CASE("the delta fixture's profile is a candle profile the hash embedder does not match") {
  const auto reader = open_reference_fixture("AGENTS.delta.db");
  if (!reader) return;
  const std::optional<std::string_view> metadata = reader->metadata_json();
  REQUIRE(metadata.has_value());
  const auto profile = agdb::parse_layer_metadata_profile(*metadata);
  REQUIRE_MESSAGE(profile.has_value(), test_support::error_text(profile));
  CHECK(*profile == agdb::embedding_profile{"candle", "all-minilm-l6-v2", "main", 384, "none"});
  CHECK(agdb::describe(*profile) == "candle:all-minilm-l6-v2@main(dim=384, norm=none)");
  CHECK(*profile != agdb::hash_embedder(384).profile());

  // Given the same embedder metadata, layer_metadata_json rebuilds the blob byte for byte.
  const std::string_view blob = *metadata;
  const std::string_view opening = R"("embedder_metadata":)";
  const std::size_t begin = blob.find(opening);
  const std::size_t end = blob.find(R"(,"tool_name":)");
  REQUIRE(begin != std::string_view::npos);
  REQUIRE(end != std::string_view::npos);
  const std::string_view embedder_metadata = blob.substr(begin + opening.size(), end - begin - opening.size());
  CHECK(agdb::layer_metadata_json(*profile, "agentsdb-web", "0.1.6", embedder_metadata) == blob);
}

namespace {

// hash_embed as the reference states it: decode the White_Space code points
// one byte at a time, add each token's +-1 in text order, normalise. The
// library's fast path must give the same bits.
std::vector<float> embed_byte_by_byte(std::string_view text, std::size_t dim) {
  static constexpr std::string_view spaces[] = {
      "\t", "\n", "\v", "\f", "\r", " ", "\xC2\x85", "\xC2\xA0", "\xE1\x9A\x80", "\xE2\x80\xA8", "\xE2\x80\xA9",
      "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80"};
  auto space_at = [&](std::size_t i) -> std::size_t {
    const std::string_view rest = text.substr(i);
    for (std::string_view space : spaces) {
      if (rest.substr(0, space.size()) == space) return space.size();
    }
    if (rest.size() >= 3 && rest.substr(0, 2) == "\xE2\x80" && static_cast<unsigned char>(rest[2]) >= 0x80 &&
        static_cast<unsigned char>(rest[2]) <= 0x8A) {
      return 3;  // U+2000..U+200A
    }
    return 0;
  };
  std::vector<float> out(dim, 0.0f);
  std::string token;
  auto add = [&] {
    if (token.empty()) return;
    const std::uint32_t h = agdb::fnv1a32(token);
    out[h % dim] += (h & 0x80000000u) != 0 ? -1.0f : 1.0f;
    token.clear();
  };
  for (std::size_t i = 0; i < text.size();) {
    if (const std::size_t space = space_at(i); space != 0) {
      add();
      i += space;
    } else {
      token.push_back(text[i++]);
    }
  }
  add();
  agdb::l2_normalize_like_reference(out);
  return out;
}

}  // namespace

TEST_CASE("hash_embed's ASCII block path gives the bits of a byte-by-byte pass") {
  // Random texts long enough for the 64-byte blocks, mixing short and long
  // (over 8 and over 64 bytes) ASCII tokens, runs of every ASCII space,
  // every non-ASCII White_Space, near misses (U+200B, U+3001, a lone C2),
  // other UTF-8 and invalid bytes, so both paths and the hand-over between
  // them run at every offset.
  static constexpr std::string_view pieces[] = {
      "a",  "to", "the", "layer", "chunking", "embedding_", "0123456789abcdef0123", " ", "  ", "\t", "\n", "\r\n",
      "\v", "\f", "\xC2\xA0", "\xC2\x85", "\xE2\x80\x83", "\xE2\x80\x8B", "\xE3\x80\x80", "\xE3\x80\x81", "\xC2",
      "\xE1\x9A\x80", "caf\xC3\xA9", "\xFF", "\x80", "\xE2\x81\x9F", "`x()`"};
  std::uint64_t state = 0x12345678u;
  auto next = [&](std::size_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::size_t>((state >> 33) % bound);
  };
  for (int round = 0; round < 600; ++round) {
    std::string text;
    const std::size_t target = next(400);
    const bool ascii_only = round % 3 == 0;
    while (text.size() < target) {
      const std::string_view piece = pieces[next(ascii_only ? 14 : std::size(pieces))];
      if (ascii_only && static_cast<unsigned char>(piece[0]) >= 0x80) continue;
      text += piece;
      if (next(4) == 0) text += std::string(next(80), 'x');  // tokens longer than a block
    }
    for (const std::size_t dim : {std::size_t{1}, std::size_t{3}, std::size_t{128}, std::size_t{384}}) {
      CAPTURE(round);
      CAPTURE(dim);
      const std::vector<float> fast = embed(text, dim);
      const std::vector<float> plain = embed_byte_by_byte(text, dim);
      REQUIRE(std::memcmp(fast.data(), plain.data(), dim * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("ascii_white_space_bits marks exactly TAB, LF, VT, FF, CR and SPACE") {
  for (unsigned c = 0; c < 0x80; ++c) {
    CAPTURE(c);
    const std::uint64_t word = (0x4141414141414141ull & ~(std::uint64_t{0xFF} << 24)) | (std::uint64_t{c} << 24);
    const bool space = c == 9 || c == 10 || c == 11 || c == 12 || c == 13 || c == 32;
    CHECK(agdb::detail::ascii_white_space_bits(word) == (space ? 0x08u : 0u));
  }
}

}  // namespace agdb_hash_embedder_test
