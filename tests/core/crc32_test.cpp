#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "agentctx/core/crc32.hpp"

namespace core_crc32_test {

using agentctx::crc32;

TEST_CASE("CRC-32 matches the IEEE / zlib check values") {
  struct row {
    std::string input;
    std::uint32_t crc;
  };
  const std::vector<row> rows = {
      {"", 0x00000000u},
      {"a", 0xE8B7BE43u},
      {"123456789", 0xCBF43926u},
      {"The quick brown fox jumps over the lazy dog", 0x414FA339u},
      {std::string(32, '\0'), 0x190A55ADu},
      {std::string(32, '\xFF'), 0xFF6CAB0Bu},
  };
  for (const auto& r : rows) {
    CAPTURE(r.input);
    CHECK(crc32(r.input) == r.crc);
    CHECK(crc32(std::as_bytes(std::span(r.input.data(), r.input.size()))) == r.crc);
  }
}

TEST_CASE("empty input leaves the seed unchanged") {
  CHECK(crc32(std::span<const std::byte>()) == 0);
  CHECK(crc32(std::span<const std::byte>(), 0xCBF43926u) == 0xCBF43926u);
  CHECK(crc32(std::string_view(), 0x12345678u) == 0x12345678u);
}

TEST_CASE("incremental CRC-32 equals the one-shot value") {
  std::mt19937_64 generator(7);
  std::vector<std::byte> data(4096);
  for (auto& b : data) b = static_cast<std::byte>(generator() & 0xFF);
  const std::span<const std::byte> all(data);
  const std::uint32_t expected = crc32(all);

  for (std::size_t split = 0; split <= data.size(); split += 61) {
    CAPTURE(split);
    CHECK(crc32(all.subspan(split), crc32(all.first(split))) == expected);
  }

  agentctx::crc32_hasher hasher;
  CHECK(hasher.value() == 0);
  std::size_t at = 0;
  while (at < data.size()) {
    std::size_t chunk = std::min<std::size_t>(generator() % 300, data.size() - at);
    hasher.update(all.subspan(at, chunk));
    at += chunk;
  }
  CHECK(hasher.value() == expected);

  hasher.reset();
  hasher.update("1234");
  hasher.update("");
  hasher.update("56789");
  CHECK(hasher.value() == 0xCBF43926u);
}

}  // namespace core_crc32_test
