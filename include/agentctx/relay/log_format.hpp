// agentctx/relay/log_format.hpp: the bytes of relay.log, the append-only
// record log a Relay store keeps (docs/format/relay-store.md).
//
//   file header (32 bytes):
//     0  8  magic "RELAYLOG"
//     8  4  u32 format version (2; 1 is read too)
//    12  4  u32 header size (32)
//    16 16  reserved, zero
//   then records, back to back:
//     0  4  u32 payload length N (1 .. max_record_payload)
//     4  4  u32 CRC-32 (IEEE, as zlib) of the payload
//     8  N  payload: one JSON object in RFC 8785 canonical form, whose
//           "type" member says what it records
//
// Integers are little-endian. A record is committed once all its bytes are
// durable; a writer appends one record and syncs before it acknowledges the
// operation, so at most the last record can be incomplete after a crash.
//
// scan_records() walks the records from a given offset and classifies where
// it stopped: at the end (clean), at a last record that fails its checks
// (torn: a crash during an append, which may keep any subset of the append's
// pages, or a reader racing the writer; the writer cuts it), or at a record
// that fails its checks and cannot be the torn last append (damaged: the
// file was altered after the fact; nothing is cut, the store refuses it). A
// bad record cannot be a torn append when a good record follows it, or when
// bytes follow the end its header gives and that header lies within one
// 512-byte sector (a torn append ends where its record does; a crash can
// keep half of a header only across sectors).
// salvage_records() reads past damage for store::repair: it resumes at the
// next good record and lists the bytes it skipped.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/crc32.hpp"
#include "agentctx/core/endian.hpp"

namespace agentctx::relay {

inline constexpr char log_magic[8] = {'R', 'E', 'L', 'A', 'Y', 'L', 'O', 'G'};
/// The format version this build writes. Version 2 (2026-11-28) has the
/// records of version 1, and more that a reader of version 1 refuses: a
/// status change that flags a package awaiting review again, and times
/// before 1970. A writer writes 2 into the header of a version 1 log before
/// it appends its first record (store.hpp), so that a reader of version 1
/// refuses the log as a version it does not read, never as damage.
inline constexpr std::uint32_t log_format_version = 2;
/// The oldest format version this build reads.
inline constexpr std::uint32_t oldest_log_format_version = 1;

/// Whether this build reads logs of format `version`.
constexpr bool is_readable_log_version(std::uint32_t version) noexcept {
  return version >= oldest_log_format_version && version <= log_format_version;
}
inline constexpr std::size_t log_header_size = 32;
inline constexpr std::size_t record_header_size = 8;
/// Largest record payload: 64 MiB (a package's content_md counts against it).
inline constexpr std::uint32_t max_record_payload = 64u << 20;

/// The 32-byte file header (of the format version this build writes, or
/// of `version`).
inline std::string encode_log_header(std::uint32_t version = log_format_version) {
  std::string out(log_header_size, '\0');
  std::memcpy(out.data(), log_magic, sizeof log_magic);
  store_u32(out.data() + 8, version);
  store_u32(out.data() + 12, static_cast<std::uint32_t>(log_header_size));
  return out;
}

/// What check_log_header() found:
///   ok                   a header this build reads (format version 1 or 2)
///   bad_magic            not a Relay log (a short file too, unless it is a
///                        prefix of a header)
///   unsupported_version  a Relay log of a format version this build does not read
///   incomplete           shorter than a header and a prefix of a header
///                        of a version this build reads (empty included), or all zeros
///                        and no longer than a header: a creation a crash
///                        interrupted, or one in progress
///   damaged              a Relay header whose fixed fields are wrong (or a
///                        short file that starts like one but is not a prefix)
enum class header_check { ok, bad_magic, unsupported_version, incomplete, damaged };

inline header_check check_log_header(std::span<const std::byte> bytes) noexcept {
  // Zeros: a file system that made the new length durable before the
  // header's bytes (XFS) after a crash in creation.
  const auto all_zero = [&] { return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; }); };
  if (bytes.size() == log_header_size && all_zero()) return header_check::incomplete;
  if (bytes.size() < log_header_size) {
    for (std::uint32_t version = oldest_log_format_version; version <= log_format_version; ++version) {
      const std::string header = encode_log_header(version);
      if (bytes.empty() || std::memcmp(bytes.data(), header.data(), bytes.size()) == 0) return header_check::incomplete;
    }
    if (all_zero()) return header_check::incomplete;
    if (std::memcmp(bytes.data(), log_magic, std::min(bytes.size(), sizeof log_magic)) != 0) {
      return header_check::bad_magic;
    }
    if (bytes.size() >= 12 && !is_readable_log_version(load_u32(bytes.data() + 8))) {
      return header_check::unsupported_version;
    }
    return header_check::damaged;
  }
  if (std::memcmp(bytes.data(), log_magic, sizeof log_magic) != 0) return header_check::bad_magic;
  if (!is_readable_log_version(load_u32(bytes.data() + 8))) return header_check::unsupported_version;
  if (load_u32(bytes.data() + 12) != log_header_size) return header_check::damaged;
  for (std::size_t i = 16; i < log_header_size; ++i) {
    if (bytes[i] != std::byte{0}) return header_check::damaged;
  }
  return header_check::ok;
}

/// Appends one framed record holding `payload` to `out`.
inline void append_record(std::string& out, std::string_view payload) {
  char header[record_header_size];
  store_u32(header, static_cast<std::uint32_t>(payload.size()));
  store_u32(header + 4, crc32(payload));
  out.append(header, sizeof header);
  out.append(payload);
}

/// Where a scan stopped.
enum class log_tail { clean, torn, damaged };

struct scanned_record {
  std::uint64_t offset = 0;  ///< of the record header
  std::string_view payload;
};

struct log_scan {
  std::vector<scanned_record> records;
  std::uint64_t valid_end = 0;  ///< end of the last good record (where the next one goes)
  log_tail tail = log_tail::clean;
  std::string problem;  ///< for torn and damaged: what was wrong at valid_end
  /// For damaged: the offset of the first good record after valid_end, when
  /// the scan looked for one (it does not when the bad record's own header
  /// shows bytes after it) and found it.
  std::optional<std::uint64_t> next_good;
};

/// How many payload bytes next_good_record() may checksum, over all its
/// calls for one scan or salvage of `file_size` bytes: candidates are cheap
/// to filter in real damage, but crafted bytes can make nearly every offset
/// a candidate that claims megabytes.
inline std::uint64_t record_search_budget(std::uint64_t file_size) noexcept { return 8 * file_size + (1u << 20); }

/// What next_good_record() found.
struct record_search {
  std::optional<std::uint64_t> found;  ///< offset in `file` of the first good record after `from`
  bool gave_up = false;                ///< the budget ran out before the end of the file
};

/// The first complete record with a good checksum that starts in (`from`,
/// end of file), if any: evidence that the bytes at `from` are damage in the
/// middle of the log rather than the torn tail of its last append, and where
/// reading can resume after it. A payload is a JSON object with members, so
/// candidates are filtered on '{"' ... '}' before their checksum is
/// computed; what is checksummed is taken from `budget`.
inline record_search next_good_record(std::span<const std::byte> file, std::uint64_t from, std::uint64_t& budget) noexcept {
  const std::uint64_t size = file.size();
  for (std::uint64_t at = from + 1; at + record_header_size + 2 <= size; ++at) {
    const std::uint32_t length = load_u32(file.data() + at);
    if (length < 2 || length > max_record_payload || length > size - at - record_header_size) continue;
    const std::byte* payload = file.data() + at + record_header_size;
    if (payload[0] != std::byte{'{'} || payload[1] != std::byte{'"'} || payload[length - 1] != std::byte{'}'}) continue;
    if (length > budget) return {std::nullopt, true};
    budget -= length;
    const std::string_view text(reinterpret_cast<const char*>(payload), length);
    if (crc32(text) == load_u32(file.data() + at + 4)) return {at, false};
  }
  return {};
}

/// Disk sectors are written whole, but a crash can keep one sector of a
/// write and not the next: a record header that spans two sectors may hold
/// half of a torn append's length.
inline constexpr std::uint64_t sector_size = 512;

namespace detail {

// scan_records, taking what it checksums in searches from `budget`.
inline log_scan scan_records(std::span<const std::byte> file, std::uint64_t offset, std::uint64_t base,
                             std::uint64_t& budget) {
  log_scan scan;
  const std::uint64_t size = file.size();
  std::uint64_t at = offset - base;
  const auto stop = [&](log_tail tail, std::string problem) {
    scan.tail = tail;
    scan.problem = std::move(problem);
  };
  // A record that fails its checks is the torn tail of the last append (a
  // crash keeps any subset of an unsynced append's pages), unless bytes
  // follow what it can be: a good record after it, or bytes after the end
  // its header gives (a torn append ends where its record does) when no
  // crash can have torn that header (it lies within one sector). Then it is
  // damage.
  const auto bad_record = [&](std::string problem, bool complete) {
    const bool header_whole = (base + at) / sector_size == (base + at + record_header_size - 1) / sector_size;
    if (complete && header_whole && at + record_header_size + load_u32(file.data() + at) < size) {
      stop(log_tail::damaged, std::move(problem));
      return;
    }
    const record_search next = next_good_record(file, at, budget);
    if (next.gave_up) {
      stop(log_tail::damaged, std::move(problem) + " (the search for a good record after it gave up)");
    } else {
      stop(next.found ? log_tail::damaged : log_tail::torn, std::move(problem));
      if (next.found) scan.next_good = base + *next.found;
    }
  };
  while (at < size) {
    const std::uint64_t remaining = size - at;
    if (remaining < record_header_size) {
      stop(log_tail::torn, "incomplete record header");
      break;
    }
    const std::byte* header = file.data() + at;
    const std::uint32_t length = load_u32(header);
    const std::uint32_t checksum = load_u32(header + 4);
    if (length == 0 || length > max_record_payload) {
      bad_record("record length " + std::to_string(length) + " is out of range", false);
      break;
    }
    if (remaining - record_header_size < length) {
      bad_record("incomplete record (" + std::to_string(length) + " payload bytes promised, " +
                     std::to_string(remaining - record_header_size) + " present)",
                 false);
      break;
    }
    const std::string_view payload(reinterpret_cast<const char*>(header + record_header_size), length);
    if (crc32(payload) != checksum) {
      bad_record("record checksum mismatch", true);
      break;
    }
    scan.records.push_back({base + at, payload});
    at += record_header_size + length;
  }
  scan.valid_end = base + at;
  return scan;
}

}  // namespace detail

/// Walks the records of `file` from `offset` (at a record boundary, past the
/// header). `file` holds relay.log's bytes from `base` on (0: the whole log);
/// `offset`, the records' offsets, valid_end and next_good are offsets in
/// the log. Payload views point into `file`.
inline log_scan scan_records(std::span<const std::byte> file, std::uint64_t offset, std::uint64_t base = 0) {
  std::uint64_t budget = record_search_budget(file.size());
  return detail::scan_records(file, offset, base, budget);
}

/// Bytes of the log a salvage skipped: damage between good records, or the
/// torn tail.
struct skipped_bytes {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::string problem;  ///< what was wrong at `offset`
  bool torn = false;    ///< the torn tail of the last append (scan_records' log_tail::torn), not damage
};

struct salvage_scan {
  std::vector<scanned_record> records;  ///< every record with a good frame and checksum, in order
  std::vector<skipped_bytes> skipped;   ///< in order
};

/// Like scan_records, but past damage: after a record that fails its checks
/// it resumes at the next good record (next_good_record), so every record
/// whose frame and checksum survive is found. What is skipped is listed.
inline salvage_scan salvage_records(std::span<const std::byte> file, std::uint64_t offset) {
  salvage_scan out;
  std::uint64_t at = offset;
  std::uint64_t budget = record_search_budget(file.size());
  while (true) {
    log_scan scan = detail::scan_records(file, at, 0, budget);
    out.records.insert(out.records.end(), scan.records.begin(), scan.records.end());
    if (scan.tail == log_tail::clean) break;
    record_search next{scan.next_good, false};
    if (scan.tail == log_tail::damaged && !next.found) next = next_good_record(file, scan.valid_end, budget);
    if (next.gave_up) scan.problem += "; the rest was not searched for records (too many bytes to checksum)";
    const std::uint64_t resume = next.found.value_or(file.size());
    out.skipped.push_back({scan.valid_end, resume - scan.valid_end, std::move(scan.problem), scan.tail == log_tail::torn});
    if (!next.found) break;
    at = *next.found;
  }
  return out;
}

}  // namespace agentctx::relay
