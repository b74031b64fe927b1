#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

#include "agentctx/core/endian.hpp"
#include "agentctx/core/utf8.hpp"

namespace core_endian_utf8_test {

TEST_CASE("little-endian loads and stores at unaligned offsets") {
  std::array<std::byte, 16> buf{};
  agentctx::store_u32(buf.data() + 1, 0x42444741u);
  CHECK(static_cast<char>(buf[1]) == 'A');
  CHECK(static_cast<char>(buf[2]) == 'G');
  CHECK(static_cast<char>(buf[3]) == 'D');
  CHECK(static_cast<char>(buf[4]) == 'B');
  CHECK(agentctx::load_u32(buf.data() + 1) == 0x42444741u);
  agentctx::store_u64(buf.data() + 3, 0x0102030405060708ull);
  CHECK(static_cast<int>(buf[3]) == 8);
  CHECK(agentctx::load_u64(buf.data() + 3) == 0x0102030405060708ull);
  agentctx::store_f32(buf.data() + 5, 1.0f);
  CHECK(agentctx::load_u32(buf.data() + 5) == 0x3f800000u);
  CHECK(agentctx::load_f32(buf.data() + 5) == 1.0f);
}

TEST_CASE("byte_writer appends little-endian fields") {
  std::vector<std::byte> out;
  agentctx::byte_writer w(out);
  w.u16(0x0201);
  w.u32(0x06050403);
  w.zeros(2);
  w.bytes("xy", 2);
  REQUIRE(out.size() == 10);
  for (int i = 0; i < 6; ++i) CHECK(static_cast<int>(out[static_cast<std::size_t>(i)]) == i + 1);
  CHECK(static_cast<char>(out[8]) == 'x');
}

TEST_CASE("UTF-8 validation follows RFC 3629") {
  struct row {
    std::string text;
    std::size_t first_bad;
  };
  const std::vector<row> rows = {
      {"", std::string::npos},
      {"plain ascii text longer than eight bytes", std::string::npos},
      {"caf\xC3\xA9", std::string::npos},
      {"\xE2\x82\xAC euro", std::string::npos},
      {"\xF0\x9F\x98\x80 emoji", std::string::npos},
      {"\xF4\x8F\xBF\xBF", std::string::npos},  // U+10FFFF
      {"ab\x80", 2},                            // lone continuation
      {"\xC0\xAF", 0},                          // overlong '/'
      {"\xC1\xBF", 0},                          // overlong
      {"\xE0\x80\xAF", 0},                      // overlong 3-byte
      {"\xED\xA0\x80", 0},                      // surrogate U+D800
      {"\xF4\x90\x80\x80", 0},                  // above U+10FFFF
      {"\xF5\x80\x80\x80", 0},
      {"abcdefgh\xE2\x82", 8},                  // truncated at end
      {"\xFF", 0},
      {"ok\xC3(", 2},
  };
  for (const auto& r : rows) {
    CAPTURE(r.text);
    std::size_t expected = r.first_bad == std::string::npos ? r.text.size() : r.first_bad;
    CHECK(agentctx::find_invalid_utf8(r.text) == expected);
    CHECK(agentctx::is_valid_utf8(r.text) == (r.first_bad == std::string::npos));
  }
}

}  // namespace core_endian_utf8_test
