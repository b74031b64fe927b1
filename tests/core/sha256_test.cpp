#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "agentctx/core/sha256.hpp"

namespace core_sha256_test {

using agentctx::sha256;
using agentctx::sha256_hasher;
using agentctx::to_hex;

namespace {
std::vector<std::byte> random_bytes(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<std::byte> out(size);
  for (auto& b : out) b = static_cast<std::byte>(generator() & 0xFF);
  return out;
}
}  // namespace

TEST_CASE("SHA-256 matches the FIPS 180-4 / NIST test vectors") {
  struct row {
    std::string input;
    const char* digest;
  };
  const std::vector<row> rows = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",  // 448 bits
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},  // 896 bits
      {std::string(1'000'000, 'a'), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.input.size());
    CHECK(to_hex(sha256(r.input)) == r.digest);
    CHECK(to_hex(sha256(std::as_bytes(std::span(r.input.data(), r.input.size())))) == r.digest);
    sha256_hasher hasher;
    hasher.update(r.input);
    CHECK(to_hex(hasher.finish()) == r.digest);
    agentctx::detail::sha256_portable portable;
    portable.update(reinterpret_cast<const std::uint8_t*>(r.input.data()), r.input.size());
    CHECK(to_hex(portable.finish()) == r.digest);
  }
}

TEST_CASE("this build hashes through OpenSSL") {
  sha256_hasher hasher;
  CHECK(hasher.uses_openssl());
}

TEST_CASE("incremental updates equal the one-shot digest") {
  const std::vector<std::byte> data = random_bytes(1000, 1);
  const std::span<const std::byte> all(data);
  const agentctx::sha256_digest expected = sha256(all);

  // Every split point, including both empty halves.
  for (std::size_t split = 0; split <= data.size(); split += 7) {
    CAPTURE(split);
    sha256_hasher hasher;
    hasher.update(all.first(split));
    hasher.update(all.subspan(split));
    CHECK(hasher.finish() == expected);
  }
  // Random chunk sizes, reusing one hasher across messages.
  std::mt19937_64 generator(2);
  sha256_hasher hasher;
  for (int round = 0; round < 20; ++round) {
    std::size_t at = 0;
    while (at < data.size()) {
      std::size_t chunk = std::min<std::size_t>(generator() % 150, data.size() - at);
      hasher.update(all.subspan(at, chunk));
      at += chunk;
    }
    CHECK(hasher.finish() == expected);
  }
  // One million 'a' fed a thousand at a time.
  const std::string thousand(1000, 'a');
  for (int i = 0; i < 1000; ++i) hasher.update(thousand);
  CHECK(to_hex(hasher.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("the portable fallback agrees with OpenSSL at every padding boundary") {
  const std::vector<std::byte> data = random_bytes(300, 3);
  agentctx::detail::sha256_portable portable;
  for (std::size_t size = 0; size <= data.size(); ++size) {
    CAPTURE(size);
    const auto message = std::span<const std::byte>(data).first(size);
    // Fed in two parts so the portable buffer handling is exercised too.
    portable.update(reinterpret_cast<const std::uint8_t*>(message.data()), size / 3);
    portable.update(reinterpret_cast<const std::uint8_t*>(message.data()) + size / 3, size - size / 3);
    CHECK(portable.finish() == sha256(message));
  }
}

TEST_CASE("finish starts a new message, reset discards one, moves keep state") {
  sha256_hasher hasher;
  hasher.update("abc");
  CHECK(hasher.finish() == sha256("abc"));
  CHECK(hasher.finish() == sha256(""));

  hasher.update("discarded");
  hasher.reset();
  hasher.update("abc");
  CHECK(hasher.finish() == sha256("abc"));

  hasher.update("ab");
  sha256_hasher moved(std::move(hasher));
  moved.update("c");
  CHECK(moved.finish() == sha256("abc"));
  // A moved-from hasher still works and holds the empty message.
  CHECK(hasher.finish() == sha256(""));  // NOLINT(bugprone-use-after-move)
  hasher.update("abc");
  CHECK(hasher.finish() == sha256("abc"));

  sha256_hasher assigned;
  assigned.update("x");
  moved.update("a");
  assigned = std::move(moved);
  assigned.update("bc");
  CHECK(assigned.finish() == sha256("abc"));
}

TEST_CASE("to_hex writes lowercase pairs") {
  const std::vector<std::uint8_t> bytes = {0x00, 0x0f, 0xa0, 0xff, 0x42};
  CHECK(to_hex(bytes) == "000fa0ff42");
  CHECK(to_hex(std::span<const std::uint8_t>()) == "");
}

TEST_CASE("parse_hex_digest reads back what to_hex writes, and nothing else") {
  const agentctx::sha256_digest abc = sha256("abc");
  const std::string hex = to_hex(abc);
  CHECK(agentctx::parse_hex_digest(hex) == abc);
  CHECK(agentctx::parse_hex_digest(std::string(64, 'f'))->back() == 0xff);
  struct row {
    std::string text;
    const char* why;
  };
  const std::vector<row> bad = {
      {"", "empty"},
      {hex.substr(0, 63), "one digit short"},
      {hex + "0", "one digit long"},
      {"0x" + hex.substr(2), "a prefix"},
      {" " + hex.substr(1), "white space"},
      {"BA" + hex.substr(2), "uppercase"},
      {"g" + hex.substr(1), "not a hex digit"},
      {hex.substr(0, 62) + std::string(1, '\0') + "0", "a NUL byte"},
  };
  for (const row& r : bad) {
    CAPTURE(r.why);
    CHECK_FALSE(agentctx::parse_hex_digest(r.text).has_value());
  }
}

}  // namespace core_sha256_test
