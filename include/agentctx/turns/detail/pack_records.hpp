// agentctx/turns/detail/pack_records.hpp: reading and checking BlobRecords in
// blobs.pack, shared by the store's recovery scan, its reads and fsck.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/crc32.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/zstd_codec.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/turns/format.hpp"

namespace agentctx::turns::detail {

inline result<void> read_exact(io::file& f, std::uint64_t offset, std::span<std::byte> out) {
  auto n = f.read_at(offset, out);
  if (!n) return unexpected(std::move(n).error());
  if (*n != out.size()) return fail(errc::truncated, "file ends early", f.path(), offset + *n);
  return {};
}

/// The problem read_pack_record() reports for a record whose header and
/// lengths hold but whose bytes do not: the next record can still be found.
inline constexpr std::string_view checksum_problem = "blob record checksum mismatch";

/// Reads the BlobRecord at `offset` of a pack whose valid bytes end at `end`
/// (lengths are checked against `end`: no size limit is needed to read safely).
/// With `ends_at_end` (the index knows the record's size) the record is read
/// with one pread and must end exactly at `end`.
/// On success `problem` is empty, `header` holds the record's header and
/// `record` the whole record (header, stored bytes, crc). Otherwise `problem`
/// says why the bytes there are not a valid record (torn or damaged).
/// I/O errors are returned as errors.
inline result<void> read_pack_record(io::file& pack, std::uint64_t offset, std::uint64_t end,
                                     blob_record_header& header, std::vector<std::byte>& record,
                                     std::string& problem, bool ends_at_end = false) {
  problem.clear();
  std::uint64_t remaining = end > offset ? end - offset : 0;
  if (remaining < blob_header_size + blob_trailer_size) {
    problem = "blob record cut short";
    return {};
  }
  record.resize(ends_at_end ? static_cast<std::size_t>(remaining) : blob_header_size);
  AGENTCTX_TRY(read_exact(pack, offset, record));
  if (decode_blob_header(record.data(), UINT32_MAX, header) != blob_problem::none) {
    problem = "bad blob record header";
    return {};
  }
  if (header.record_size() > remaining || (ends_at_end && header.record_size() != remaining)) {
    problem = ends_at_end ? "blob record size differs from the index" : "blob record runs past the end of the pack";
    return {};
  }
  if (!ends_at_end) {
    record.resize(static_cast<std::size_t>(header.record_size()));
    AGENTCTX_TRY(read_exact(pack, offset + blob_header_size, std::span(record).subspan(blob_header_size)));
  }
  std::size_t covered = blob_header_size + header.stored_len;
  if (load_u32(record.data() + covered) != crc32(std::span<const std::byte>(record.data(), covered))) {
    problem = checksum_problem;
  }
  return {};
}

/// The raw payload of a checked record: decompressed, and verified against
/// the record's hash. Errors: corrupt.
inline result<std::vector<std::byte>> decode_payload(const blob_record_header& header,
                                                     std::span<const std::byte> record, zstd_codec_pool& codecs) {
  std::span<const std::byte> stored = record.subspan(blob_header_size, header.stored_len);
  std::vector<std::byte> raw;
  if (header.codec == static_cast<std::uint16_t>(blob_codec::raw)) {
    raw.assign(stored.begin(), stored.end());
  } else {
    // The frame must declare the recorded size before that much is allocated.
    if (zstd_codec::frame_content_size(stored) != header.raw_len) {
      return fail(errc::corrupt, "zstd frame does not declare the recorded raw length");
    }
    raw.resize(header.raw_len);
    auto codec = codecs.borrow();
    auto decoded = codec->decompress(stored, raw);
    if (!decoded) return unexpected(std::move(decoded).error());
  }
  if (sha256(std::span<const std::byte>(raw)) != header.hash) {
    return fail(errc::corrupt, "payload does not match its hash");
  }
  return raw;
}

}  // namespace agentctx::turns::detail
