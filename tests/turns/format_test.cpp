// The turn store's records, byte for byte (docs/format/turn-store.md).
#include "turns/turn_test_support.hpp"

namespace turns_format_test {

using namespace turns_test;

TEST_CASE("turn format: file header layout and every way it can be wrong") {
  store_salt salt;
  for (std::size_t i = 0; i < salt.size(); ++i) salt[i] = static_cast<std::uint8_t>(i + 1);
  std::byte header[file_header_size];
  encode_file_header(header, {turn_log_magic, salt});
  CHECK(std::memcmp(header, "TLOG", 4) == 0);
  CHECK(load_u16(header + 4) == 1);
  CHECK(load_u16(header + 6) == 32);
  CHECK(header[8] == std::byte{1});
  CHECK(header[23] == std::byte{16});
  CHECK(load_u32(header + 24) == 0);
  CHECK(load_u32(header + 28) == crc32(std::span<const std::byte>(header, 28)));
  file_header decoded;
  CHECK(decode_file_header(header, turn_log_magic, decoded) == header_problem::none);
  CHECK(decoded.salt == salt);

  struct bad_case {
    const char* name;
    std::size_t offset;
    std::uint8_t value;
    bool fix_crc;
    header_problem expected;
  };
  const bad_case cases[] = {
      {"magic", 0, 'X', true, header_problem::bad_magic},
      {"version", 4, 2, true, header_problem::bad_version},
      {"header size", 6, 40, true, header_problem::bad_size},
      {"reserved", 25, 1, true, header_problem::reserved},
      {"checksum", 10, 0xEE, false, header_problem::checksum},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    std::byte copy[file_header_size];
    std::memcpy(copy, header, sizeof copy);
    copy[c.offset] = static_cast<std::byte>(c.value);
    if (c.fix_crc) store_u32(copy + 28, crc32(std::span<const std::byte>(copy, 28)));
    CHECK(decode_file_header(copy, turn_log_magic, decoded) == c.expected);
  }
  CHECK(decode_file_header(std::span<const std::byte>(header, 31), turn_log_magic, decoded) == header_problem::bad_size);
  CHECK(decode_file_header(header, pack_magic, decoded) == header_problem::bad_magic);
  // Zeros never validate (CRC-32 with the final xor).
  std::byte zeros[file_header_size] = {};
  CHECK(decode_file_header(zeros, 0, decoded) == header_problem::checksum);
}

TEST_CASE("turn format: TurnRecordV1 is 80 bytes at the seed's offsets") {
  turn t;
  t.id = 0x0102030405060708;
  t.parent = 7;
  t.depth = 9;
  t.codec = 0xAABBCCDD;
  t.type_tag = 0x1122334455667788;
  for (std::size_t i = 0; i < 32; ++i) t.payload_hash[i] = static_cast<std::uint8_t>(0xA0 + i);
  t.flags = 5;
  t.created_at_unix_ms = 1'700'000'000'123;
  std::byte bytes[turn_record_size];
  encode_turn_record(bytes, t);
  CHECK(bytes[0] == std::byte{0x08});  // little-endian
  CHECK(load_u64(bytes + 8) == 7);
  CHECK(load_u32(bytes + 16) == 9);
  CHECK(load_u32(bytes + 20) == 0xAABBCCDD);
  CHECK(load_u64(bytes + 24) == 0x1122334455667788);
  CHECK(bytes[32] == std::byte{0xA0});
  CHECK(bytes[63] == std::byte{0xBF});
  CHECK(load_u32(bytes + 64) == 5);
  CHECK(load_u64(bytes + 68) == 1'700'000'000'123);
  CHECK(load_u32(bytes + 76) == crc32(std::span<const std::byte>(bytes, 76)));
  turn back;
  REQUIRE(decode_turn_record(bytes, back));
  CHECK(back == t);
  for (std::size_t i = 0; i < turn_record_size; ++i) {
    std::byte copy[turn_record_size];
    std::memcpy(copy, bytes, sizeof copy);
    copy[i] ^= std::byte{0x10};
    CHECK_FALSE(decode_turn_record(copy, back));
  }
  CHECK(turn_record_offset(1) == 32);
  CHECK(turn_record_offset(3) == 32 + 160);
}

TEST_CASE("turn format: BlobRecord header (seed 4.4) and its sanity checks") {
  blob_record_header h;
  h.codec = 1;
  h.raw_len = 10'000;
  h.stored_len = 4'000;
  h.hash = sha256("payload");
  std::byte bytes[blob_header_size];
  encode_blob_header(bytes, h);
  CHECK(load_u32(bytes) == 0x42534C42);
  CHECK(load_u16(bytes + 4) == 1);
  CHECK(load_u16(bytes + 6) == 1);
  CHECK(load_u32(bytes + 8) == 10'000);
  CHECK(load_u32(bytes + 12) == 4'000);
  CHECK(std::memcmp(bytes + 16, h.hash.data(), 32) == 0);
  CHECK(h.record_size() == 48 + 4'000 + 4);
  blob_record_header back;
  CHECK(decode_blob_header(bytes, 1 << 20, back) == blob_problem::none);
  CHECK(back.hash == h.hash);

  struct bad_case {
    const char* name;
    std::uint16_t codec;
    std::uint32_t raw;
    std::uint32_t stored;
    std::uint32_t limit;
    blob_problem expected;
  };
  const bad_case cases[] = {
      {"unknown codec", 7, 10, 10, 100, blob_problem::bad_codec},
      {"raw with another stored length", 0, 10, 11, 100, blob_problem::bad_lengths},
      {"zstd far larger than its bound", 1, 10, 5'000, 100, blob_problem::bad_lengths},
      {"raw length over the limit", 0, 101, 101, 100, blob_problem::too_large},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    blob_record_header bad = h;
    bad.codec = c.codec;
    bad.raw_len = c.raw;
    bad.stored_len = c.stored;
    encode_blob_header(bytes, bad);
    CHECK(decode_blob_header(bytes, c.limit, back) == c.expected);
  }
  encode_blob_header(bytes, h);
  store_u16(bytes + 4, 2);
  CHECK(decode_blob_header(bytes, 1 << 20, back) == blob_problem::bad_version);
  store_u32(bytes, 0);
  CHECK(decode_blob_header(bytes, 1 << 20, back) == blob_problem::bad_magic);
}

TEST_CASE("turn format: head records and snapshot entries") {
  context_head h{0x1234, 99, 12, 0, 1'700'000'000'000};
  std::byte bytes[head_record_size];
  encode_head_record(bytes, 5, h);
  CHECK(load_u64(bytes) == 5);
  CHECK(load_u64(bytes + 8) == 0x1234);
  CHECK(load_u64(bytes + 16) == 99);
  CHECK(load_u32(bytes + 24) == 12);
  std::uint64_t seq = 0;
  context_head back;
  REQUIRE(decode_head_record(bytes, seq, back));
  CHECK(seq == 5);
  CHECK(back == h);
  bytes[30] ^= std::byte{1};
  CHECK_FALSE(decode_head_record(bytes, seq, back));
  encode_head_record(bytes, 5, context_head{0, 1, 0, 0, 0});  // context id 0 is never valid
  CHECK_FALSE(decode_head_record(bytes, seq, back));
  std::byte entry[head_entry_size];
  encode_head_entry(entry, h);
  CHECK(decode_head_entry(entry) == h);
}

TEST_CASE("turn format: context ids print as 16 hex digits and parse strictly") {
  CHECK(to_hex_id(0x1234) == "0000000000001234");
  CHECK(to_hex_id(~context_id{0}) == "ffffffffffffffff");
  CHECK(parse_hex_id("0000000000001234") == context_id{0x1234});
  CHECK(parse_hex_id("0xABCdef") == context_id{0xABCDEF});
  for (const char* bad : {"", "0x", "0", "00000000000000000", "12g4", " 12", "-1", "0x0"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_hex_id(bad).has_value());
  }
}

}  // namespace turns_format_test
