#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "agentctx/core/base64.hpp"

namespace core_base64_test {

using agentctx::base64_decode;
using agentctx::base64_encode;
using agentctx::errc;

namespace {
std::string as_text(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}
}  // namespace

TEST_CASE("base64 matches the RFC 4648 section 10 test vectors both ways") {
  struct row {
    std::string bytes;
    std::string text;
  };
  const std::vector<row> rows = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
      // Every character of the alphabet, the last two (+ /) included.
      {std::string("\x00\x10\x83\x10\x51\x87\x20\x92\x8b\x30\xd3\x8f\x41\x14\x93\x51\x55\x97\x61\x96\x9b\x71\xd7\x9f"
                   "\x82\x18\xa3\x92\x59\xa7\xa2\x9a\xab\xb2\xdb\xaf\xc3\x1c\xb3\xd3\x5d\xb7\xe3\x9e\xbb\xf3\xdf\xbf",
                   48),
       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"},
      {std::string("\x00\x00\x00", 3), "AAAA"},
      {std::string("\xff\xff\xff", 3), "////"},
      {std::string("\xfb\xff", 2), "+/8="},
      {std::string("\0", 1), "AA=="},
  };
  for (const row& r : rows) {
    CAPTURE(r.text);
    CHECK(base64_encode(r.bytes) == r.text);
    CHECK(base64_encode(std::as_bytes(std::span(r.bytes.data(), r.bytes.size()))) == r.text);
    auto decoded = base64_decode(r.text);
    REQUIRE(decoded.has_value());
    CHECK(as_text(*decoded) == r.bytes);
  }
}

TEST_CASE("base64 round-trips every length and byte value") {
  std::mt19937_64 generator(11);
  for (std::size_t size = 0; size < 200; ++size) {
    std::vector<std::byte> bytes(size);
    for (auto& b : bytes) b = static_cast<std::byte>(generator() & 0xFF);
    const std::string text = base64_encode(bytes);
    CAPTURE(size);
    CHECK(text.size() == (size + 2) / 3 * 4);
    auto decoded = base64_decode(text);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == bytes);
  }
}

TEST_CASE("base64 decoding refuses everything but canonical padded text, naming the position") {
  struct row {
    std::string text;
    std::uint64_t offset;
    std::string message;
  };
  const std::vector<row> rows = {
      {"Zg", 2, "base64 text is 2 characters long, not a multiple of 4"},
      {"Zm9vY", 5, "not a multiple of 4"},
      {"Zm9v\n", 5, "not a multiple of 4"},
      {"Zg=", 3, "not a multiple of 4"},
      {"Zm9!", 3, "base64 text holds character '!'"},
      {"Zm9-", 3, "character '-'"},       // URL-safe alphabet
      {"Zm9_", 3, "character '_'"},
      {"Zm 9", 2, "character ' '"},       // white space
      {"Zm9v\r\nYg", 4, "byte 13"},       // line breaks
      {std::string("Zm\0v", 4), 2, "byte 0"},
      {"Zm\xc3\xa9", 2, "byte 195"},      // UTF-8, not ASCII
      {"Zg==Zg==", 2, "padding '=' before the end"},
      {"====", 0, "padding '=' before the end"},
      {"Z===", 1, "padding '=' before the end"},
      {"=Zm9", 0, "padding '=' before the end"},
      {"Zh==", 1, "nonzero bits before its padding"},  // "Zg==" is the canonical "f"
      {"Zm9=", 2, "nonzero bits before its padding"},  // "Zm8=" is the canonical "fo"
  };
  for (const row& r : rows) {
    CAPTURE(r.text);
    auto decoded = base64_decode(r.text);
    REQUIRE_FALSE(decoded.has_value());
    CHECK(decoded.error().code == errc::invalid_value);
    CHECK(decoded.error().offset == r.offset);
    CHECK(decoded.error().message.find(r.message) != std::string::npos);
  }
}

}  // namespace core_base64_test
