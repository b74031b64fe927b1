// agentctx/turns/format.hpp: the turn store's on-disk records (seed 002,
// sections 4.4 and 5.1; docs/format/turn-store.md).
//
// A store is a directory of files. The three that hold the truth are
// append-only logs that start with a 32-byte file header:
//   blobs.pack   BlobRecords (seed 4.4 exactly)
//   turns.log    80-byte TurnRecordV1 records; record of turn N at 32 + (N-1)*80
//   heads.log    48-byte head records, one per head change
// The others are derived and rebuilt when missing or damaged (heads.snap,
// blobs.idx and its runs, turns.idx).
//
// Every integer is little-endian and decoded field by field; callers check
// that the bytes are available before calling a decode_* function. CRC-32 is
// zlib's (core/crc32.hpp), so zero-filled regions never validate.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "agentctx/core/crc32.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/sha256.hpp"

namespace agentctx::turns {

using turn_id = std::uint64_t;      ///< dense, from 1, in write order; 0 = none
using context_id = std::uint64_t;   ///< random, never 0
using blob_hash = sha256_digest;    ///< SHA-256 of the raw payload bytes
using store_salt = std::array<std::uint8_t, 16>;

/// A context id as 16 lowercase hex digits (how tools print it: JSON numbers
/// lose precision past 2^53).
inline std::string to_hex_id(context_id id) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, id >>= 4) out[static_cast<std::size_t>(i)] = digits[id & 0xF];
  return out;
}

/// Parses 1-16 hex digits, optionally after "0x"; nullopt for anything else or 0.
inline std::optional<context_id> parse_hex_id(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  context_id id = 0;
  for (char c : text) {
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (v < 0) return std::nullopt;
    id = (id << 4) | static_cast<context_id>(v);
  }
  if (id == 0) return std::nullopt;
  return id;
}

// --- file names --------------------------------------------------------------

inline constexpr std::string_view pack_file_name = "blobs.pack";
inline constexpr std::string_view turn_log_file_name = "turns.log";
inline constexpr std::string_view head_log_file_name = "heads.log";
inline constexpr std::string_view head_snapshot_file_name = "heads.snap";
inline constexpr std::string_view index_manifest_file_name = "blobs.idx";
inline constexpr std::string_view turn_checkpoint_file_name = "turns.idx";
inline constexpr std::string_view lock_file_name = "store.lock";

/// True when `name` is one of a store's own files: a name above, a run of the
/// blob index ("blobs.idx.<number>", blob_index.hpp), or the temporary file
/// of an atomic write of one (".<name>.tmp.<...>", which the store removes).
inline bool is_store_file_name(std::string_view name) {
  if (const std::size_t tmp = name.find(".tmp."); name.starts_with('.') && tmp != std::string_view::npos && tmp > 1) {
    return is_store_file_name(name.substr(1, tmp - 1));
  }
  for (const std::string_view own : {pack_file_name, turn_log_file_name, head_log_file_name, head_snapshot_file_name,
                                     index_manifest_file_name, turn_checkpoint_file_name, lock_file_name}) {
    if (name == own) return true;
  }
  if (!name.starts_with(index_manifest_file_name)) return false;
  const std::string_view rest = name.substr(index_manifest_file_name.size());
  return rest.size() > 1 && rest[0] == '.' &&
         rest.find_first_not_of("0123456789", 1) == std::string_view::npos;
}

// --- file header (32 bytes) ----------------------------------------------------

inline constexpr std::uint32_t pack_magic = 0x4B505342;            // "BSPK" on disk
inline constexpr std::uint32_t turn_log_magic = 0x474F4C54;        // "TLOG"
inline constexpr std::uint32_t head_log_magic = 0x474F4C48;        // "HLOG"
inline constexpr std::uint32_t head_snapshot_magic = 0x504E5348;   // "HSNP"
inline constexpr std::uint32_t index_manifest_magic = 0x4E414D42;  // "BMAN"
inline constexpr std::uint32_t index_run_magic = 0x58444942;       // "BIDX"
inline constexpr std::uint32_t turn_checkpoint_magic = 0x58444954; // "TIDX"

inline constexpr std::uint16_t format_version = 1;
inline constexpr std::size_t file_header_size = 32;

/// Offsets: 0 magic u32, 4 version u16, 6 header size u16 (= 32), 8 salt[16],
/// 24 reserved u32 (= 0), 28 crc32 of bytes 0..27.
struct file_header {
  std::uint32_t magic = 0;
  store_salt salt{};
};

inline void encode_file_header(std::byte* out, const file_header& header) noexcept {
  std::memset(out, 0, file_header_size);
  store_u32(out, header.magic);
  store_u16(out + 4, format_version);
  store_u16(out + 6, static_cast<std::uint16_t>(file_header_size));
  std::memcpy(out + 8, header.salt.data(), header.salt.size());
  store_u32(out + 28, crc32(std::span<const std::byte>(out, 28)));
}

enum class header_problem { none, bad_magic, bad_version, bad_size, reserved, checksum };

/// Checks a 32-byte header against `expected_magic`; on success fills `out`.
inline header_problem decode_file_header(std::span<const std::byte> bytes, std::uint32_t expected_magic,
                                         file_header& out) noexcept {
  if (bytes.size() < file_header_size) return header_problem::bad_size;
  const std::byte* p = bytes.data();
  if (load_u32(p + 28) != crc32(bytes.first(28))) return header_problem::checksum;
  if (load_u32(p) != expected_magic) return header_problem::bad_magic;
  if (load_u16(p + 4) != format_version) return header_problem::bad_version;
  if (load_u16(p + 6) != file_header_size) return header_problem::bad_size;
  if (load_u32(p + 24) != 0) return header_problem::reserved;
  out.magic = expected_magic;
  std::memcpy(out.salt.data(), p + 8, out.salt.size());
  return header_problem::none;
}

// --- BlobRecord (seed 4.4) -------------------------------------------------------

inline constexpr std::uint32_t blob_record_magic = 0x42534C42;  // 'B''S''L''B' (seed 4.4)
inline constexpr std::uint16_t blob_record_version = 1;
inline constexpr std::size_t blob_header_size = 48;  ///< magic..hash
inline constexpr std::size_t blob_trailer_size = 4;  ///< crc32

/// Compression of a stored blob (BlobRecord.codec).
enum class blob_codec : std::uint16_t { raw = 0, zstd = 1 };

constexpr std::string_view blob_codec_name(std::uint16_t codec) noexcept {
  switch (static_cast<blob_codec>(codec)) {
    case blob_codec::raw: return "raw";
    case blob_codec::zstd: return "zstd";
  }
  return "unknown";
}

/// BlobRecord header: 0 magic u32, 4 version u16, 6 codec u16, 8 raw_len u32,
/// 12 stored_len u32, 16 hash[32]; then stored_len bytes, then crc32 over
/// header and bytes.
struct blob_record_header {
  std::uint16_t codec = 0;
  std::uint32_t raw_len = 0;
  std::uint32_t stored_len = 0;
  blob_hash hash{};

  std::uint64_t record_size() const noexcept {
    return blob_header_size + std::uint64_t{stored_len} + blob_trailer_size;
  }
};

inline void encode_blob_header(std::byte* out, const blob_record_header& header) noexcept {
  store_u32(out, blob_record_magic);
  store_u16(out + 4, blob_record_version);
  store_u16(out + 6, header.codec);
  store_u32(out + 8, header.raw_len);
  store_u32(out + 12, header.stored_len);
  std::memcpy(out + 16, header.hash.data(), header.hash.size());
}

enum class blob_problem { none, bad_magic, bad_version, bad_codec, bad_lengths, too_large };

/// Decodes and sanity-checks a 48-byte BlobRecord header: magic, version, a
/// known codec, raw codec => stored_len == raw_len, raw_len <= max_raw_len.
/// It does not check that the record fits in its file or its CRC.
inline blob_problem decode_blob_header(const std::byte* p, std::uint32_t max_raw_len,
                                       blob_record_header& out) noexcept {
  if (load_u32(p) != blob_record_magic) return blob_problem::bad_magic;
  if (load_u16(p + 4) != blob_record_version) return blob_problem::bad_version;
  out.codec = load_u16(p + 6);
  out.raw_len = load_u32(p + 8);
  out.stored_len = load_u32(p + 12);
  std::memcpy(out.hash.data(), p + 16, out.hash.size());
  if (out.codec != static_cast<std::uint16_t>(blob_codec::raw) &&
      out.codec != static_cast<std::uint16_t>(blob_codec::zstd)) {
    return blob_problem::bad_codec;
  }
  if (out.raw_len > max_raw_len) return blob_problem::too_large;
  if (out.codec == static_cast<std::uint16_t>(blob_codec::raw) && out.stored_len != out.raw_len) {
    return blob_problem::bad_lengths;
  }
  // zstd never needs more than its bound; a larger stored_len is damage.
  if (out.codec == static_cast<std::uint16_t>(blob_codec::zstd) &&
      out.stored_len > std::uint64_t{out.raw_len} + (out.raw_len >> 7) + 1024) {
    return blob_problem::bad_lengths;
  }
  return blob_problem::none;
}

// --- TurnRecordV1 (seed 5.1, 80 bytes) ----------------------------------------------

inline constexpr std::size_t turn_record_size = 80;

/// An immutable turn (seed 3.2).
struct turn {
  turn_id id = 0;
  turn_id parent = 0;  ///< 0 = root
  std::uint32_t depth = 0;  ///< parent's depth + 1; a root has depth 0
  std::uint32_t codec = 0;  ///< the caller's CodecTag (payload encoding), opaque here
  std::uint64_t type_tag = 0;  ///< the caller's TypeTag, opaque here
  blob_hash payload_hash{};
  std::uint32_t flags = 0;
  std::uint64_t created_at_unix_ms = 0;

  friend bool operator==(const turn&, const turn&) = default;
};

/// 0 turn_id u64, 8 parent u64, 16 depth u32, 20 codec u32, 24 type_tag u64,
/// 32 payload_hash[32], 64 flags u32, 68 created_at_unix_ms u64, 76 crc32 of 0..75.
inline void encode_turn_record(std::byte* out, const turn& t) noexcept {
  store_u64(out, t.id);
  store_u64(out + 8, t.parent);
  store_u32(out + 16, t.depth);
  store_u32(out + 20, t.codec);
  store_u64(out + 24, t.type_tag);
  std::memcpy(out + 32, t.payload_hash.data(), t.payload_hash.size());
  store_u32(out + 64, t.flags);
  store_u64(out + 68, t.created_at_unix_ms);
  store_u32(out + 76, crc32(std::span<const std::byte>(out, 76)));
}

/// Decodes an 80-byte record; false when its CRC does not match.
inline bool decode_turn_record(const std::byte* p, turn& out) noexcept {
  if (load_u32(p + 76) != crc32(std::span<const std::byte>(p, 76))) return false;
  out.id = load_u64(p);
  out.parent = load_u64(p + 8);
  out.depth = load_u32(p + 16);
  out.codec = load_u32(p + 20);
  out.type_tag = load_u64(p + 24);
  std::memcpy(out.payload_hash.data(), p + 32, out.payload_hash.size());
  out.flags = load_u32(p + 64);
  out.created_at_unix_ms = load_u64(p + 68);
  return true;
}

/// Byte offset of turn `id` (>= 1) in turns.log.
constexpr std::uint64_t turn_record_offset(turn_id id) noexcept {
  return file_header_size + (id - 1) * turn_record_size;
}

// --- head records (heads.log, 48 bytes) and the snapshot (heads.snap) --------------

inline constexpr std::size_t head_record_size = 48;
inline constexpr std::size_t head_entry_size = 32;  ///< one head inside heads.snap

/// A context's head (seed 3.3).
struct context_head {
  context_id id = 0;
  turn_id head = 0;  ///< 0 = empty context
  std::uint32_t depth = 0;
  std::uint32_t flags = 0;
  std::uint64_t created_at_unix_ms = 0;

  friend bool operator==(const context_head&, const context_head&) = default;
};

/// 0 seq u64, 8 context u64, 16 head u64, 24 depth u32, 28 flags u32,
/// 32 created_at u64, 40 reserved u32 (= 0), 44 crc32 of 0..43.
inline void encode_head_record(std::byte* out, std::uint64_t seq, const context_head& h) noexcept {
  store_u64(out, seq);
  store_u64(out + 8, h.id);
  store_u64(out + 16, h.head);
  store_u32(out + 24, h.depth);
  store_u32(out + 28, h.flags);
  store_u64(out + 32, h.created_at_unix_ms);
  store_u32(out + 40, 0);
  store_u32(out + 44, crc32(std::span<const std::byte>(out, 44)));
}

/// False when the CRC fails, the reserved field is set or the context id is 0.
inline bool decode_head_record(const std::byte* p, std::uint64_t& seq, context_head& out) noexcept {
  if (load_u32(p + 44) != crc32(std::span<const std::byte>(p, 44))) return false;
  if (load_u32(p + 40) != 0) return false;
  seq = load_u64(p);
  out.id = load_u64(p + 8);
  out.head = load_u64(p + 16);
  out.depth = load_u32(p + 24);
  out.flags = load_u32(p + 28);
  out.created_at_unix_ms = load_u64(p + 32);
  return out.id != 0;
}

/// A head inside heads.snap: 0 context u64, 8 head u64, 16 depth u32, 20 flags u32, 24 created_at u64.
inline void encode_head_entry(std::byte* out, const context_head& h) noexcept {
  store_u64(out, h.id);
  store_u64(out + 8, h.head);
  store_u32(out + 16, h.depth);
  store_u32(out + 20, h.flags);
  store_u64(out + 24, h.created_at_unix_ms);
}

inline context_head decode_head_entry(const std::byte* p) noexcept {
  context_head h;
  h.id = load_u64(p);
  h.head = load_u64(p + 8);
  h.depth = load_u32(p + 16);
  h.flags = load_u32(p + 20);
  h.created_at_unix_ms = load_u64(p + 24);
  return h;
}

// --- blob index entries (blobs.idx.N runs) ----------------------------------------------

inline constexpr std::size_t index_entry_size = 20;  ///< after the 32-byte hashes

/// Where a blob's record is (seed 4.4 BlobIndexEntry without its hash).
struct blob_location {
  std::uint64_t offset = 0;  ///< of the BlobRecord in blobs.pack
  std::uint32_t raw_len = 0;
  std::uint32_t stored_len = 0;
  std::uint16_t codec = 0;

  std::uint64_t record_size() const noexcept {
    return blob_header_size + std::uint64_t{stored_len} + blob_trailer_size;
  }
  friend bool operator==(const blob_location&, const blob_location&) = default;
};

/// 0 offset u64, 8 raw_len u32, 12 stored_len u32, 16 codec u16, 18 reserved u16 (= 0).
inline void encode_index_entry(std::byte* out, const blob_location& l) noexcept {
  store_u64(out, l.offset);
  store_u32(out + 8, l.raw_len);
  store_u32(out + 12, l.stored_len);
  store_u16(out + 16, l.codec);
  store_u16(out + 18, 0);
}

inline blob_location decode_index_entry(const std::byte* p) noexcept {
  return {load_u64(p), load_u32(p + 8), load_u32(p + 12), load_u16(p + 16)};
}

}  // namespace agentctx::turns
