// agentctx/agdb/embedding_cache.hpp: an on-disk cache of embeddings.
//
// Embedding a corpus with a real model is slow; compiling it again after a
// small edit should only embed what changed. An `embedding_cache` maps the
// cache key of a text (embedding_cache_key.hpp: sha256 of the profile JSON, a
// zero byte and the text) to its vector, for one embedding profile:
//
//   auto cache = embedding_cache::open(fs, ".agentctx/embeddings", profile);
//   if (!cache) return unexpected(cache.error());
//   auto key = cache->key_of("some text");
//   if (auto row = cache->find(key)) use(*row);
//   AGENTCTX_TRY(cache->insert(std::span(&key, 1), vector));
//
// caching_embedder.hpp wraps any embedder with one.
//
// Storage (docs/format/embedding-cache.md is the full specification): one
// append-only file per profile in the cache directory, named
// "<sha256 hex of the profile JSON>.embedding-cache": a header (magic
// "AGECACHE", version 1, dim, the profile JSON, a CRC-32) followed by
// fixed-size records (32-byte key, dim little-endian f32, CRC-32 of both).
//   - open() reads the whole file into a hash map, under a shared lock of the
//     file. Nothing read is trusted: the records are bounds-checked and
//     their CRCs verified; reading stops at the first record that is torn
//     (the file ends inside it) or damaged (CRC mismatch), and that tail is
//     ignored.
//   - insert() appends under an exclusive lock of the file: it first reads
//     what other processes appended since (so concurrent writers lose
//     nothing and never store a key twice), truncates a torn or damaged tail,
//     appends the new records and syncs. A crash at any point leaves a file
//     that opens: at worst the records of the interrupted insert are lost.
//   - A file whose header is missing, a prefix of the right header (a crash
//     while creating it) or all zero bytes counts as empty and is rewritten
//     by the next insert.
//
// Lifetime: the cache keeps a reference to the file system, which must
// outlive it. Spans returned by find() are valid until the next insert().
// Thread-safety: one cache object must not be used from two threads at once;
// any number of cache objects, in any number of processes, may share a file.
#pragma once

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedding_cache_key.hpp"
#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/core/crc32.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::agdb {

/// The first eight bytes of every embedding cache file.
inline constexpr std::string_view embedding_cache_magic = "AGECACHE";
/// The format version this library writes and reads.
inline constexpr std::uint32_t embedding_cache_version = 1;
/// The file name suffix of cache files.
inline constexpr std::string_view embedding_cache_suffix = ".embedding-cache";

/// A cache key as raw bytes: the SHA-256 digest whose lowercase hex is
/// embedding_cache_key().
using embedding_cache_digest = std::array<std::uint8_t, 32>;

namespace detail {

inline constexpr std::size_t cache_header_fixed_size = 20;  // magic, version, dim, profile length
inline constexpr std::size_t cache_key_size = 32;
inline constexpr std::size_t cache_checksum_size = 4;

inline std::uint64_t cache_record_size(std::uint32_t dim) noexcept {
  return cache_key_size + 4 * std::uint64_t{dim} + cache_checksum_size;
}

// The header a cache file for this profile JSON and dim must start with.
inline std::vector<std::byte> encode_cache_header(std::string_view profile_json_v2, std::uint32_t dim) {
  // Starts as the magic (GCC 12 at -O2 warns, falsely, when the first bytes
  // are inserted into an empty vector).
  const auto* magic = reinterpret_cast<const std::byte*>(embedding_cache_magic.data());
  std::vector<std::byte> out(magic, magic + embedding_cache_magic.size());
  out.reserve(out.size() + 12 + profile_json_v2.size() + cache_checksum_size);
  byte_writer writer(out);
  writer.u32(embedding_cache_version);
  writer.u32(dim);
  writer.u32(static_cast<std::uint32_t>(profile_json_v2.size()));
  writer.bytes(profile_json_v2.data(), profile_json_v2.size());
  writer.u32(crc32(std::span<const std::byte>(out)));
  return out;
}

struct digest_hash {
  std::size_t operator()(const embedding_cache_digest& digest) const noexcept {
    return static_cast<std::size_t>(load_u64(digest.data()));  // already uniformly distributed
  }
};

inline int hex_digit_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace detail

/// Parses 64 hex digits (either case), as embedding_cache_key() returns them.
/// Errors: invalid_argument for any other text.
inline result<embedding_cache_digest> parse_embedding_cache_key(std::string_view hex) {
  embedding_cache_digest digest{};
  if (hex.size() != 2 * digest.size()) {
    return fail(errc::invalid_argument, "a cache key has 64 hex digits, not " + std::to_string(hex.size()));
  }
  for (std::size_t i = 0; i < digest.size(); ++i) {
    const int high = detail::hex_digit_value(hex[2 * i]);
    const int low = detail::hex_digit_value(hex[2 * i + 1]);
    if (high < 0 || low < 0) return fail(errc::invalid_argument, "a cache key holds a character that is not hex");
    digest[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return digest;
}

class embedding_cache {
 public:
  /// The name of the cache file of `profile` in a cache directory:
  /// lowercase hex sha256 of cache_key_profile_json(profile), then
  /// ".embedding-cache".
  static std::string file_name(const embedding_profile& profile) {
    return to_hex(sha256(cache_key_profile_json(profile))) + std::string(embedding_cache_suffix);
  }

  /// Opens the cache of `profile` in `directory` and loads every intact
  /// record. Nothing is written: a missing directory, and a missing cache
  /// file, are made by the first insert(), so a cache nothing is inserted
  /// into leaves nothing behind. What would keep insert() from making them
  /// is refused here, before any embedding work: the directory must be a
  /// directory, or be missing from one that is.
  /// Errors: invalid_argument for a dim of 0 or an empty directory;
  /// not_found when neither the directory nor its parent exists; the file
  /// system's errors (io_error with ENOTDIR for a file where a directory is
  /// needed, permission_denied); for a file whose header is not this
  /// profile's, naming the file and the byte: bad_magic,
  /// unsupported_version, incompatible (another dim or profile),
  /// checksum_mismatch (a damaged header).
  static result<embedding_cache> open(io::file_system& fs, const std::string& directory,
                                      const embedding_profile& profile) {
    if (profile.dim == 0) return fail(errc::invalid_argument, "embedding cache: the profile's dim is 0");
    if (directory.empty()) return fail(errc::invalid_argument, "embedding cache: the directory's name is empty");
    std::string dir = directory;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string name = file_name(profile);
    // A confined file system refuses "./name": "." is its root.
    embedding_cache cache(fs, dir == "." ? name : io::join_path(dir, name), profile);
    auto listed = fs.list_dir(dir);
    if (!listed && listed.error().code == errc::permission_denied) {
      // A directory it may search but not list: whether the file is there
      // is looked up instead.
      auto there = fs.exists(cache.path_);
      if (!there) return unexpected(std::move(there).error());
      if (!*there) return cache;
      listed = std::vector<std::string>{name};
    }
    if (!listed && listed.error().sys_errno == ENOTDIR) {
      error e = make_error(errc::io_error,
                           "embedding cache: not a directory (it, or a folder on the way to it, is a file)", directory);
      e.sys_errno = ENOTDIR;
      return unexpected(std::move(e));
    }
    if (!listed) {
      if (listed.error().code != errc::not_found) return unexpected(std::move(listed).error());
      // Missing: the folder it is to be made in must be there.
      auto parent = fs.list_dir(io::parent_directory(dir));
      if (!parent && parent.error().code == errc::not_found) {
        error e = make_error(errc::not_found, "embedding cache: the folder it would be made in does not exist",
                             directory);
        e.sys_errno = ENOENT;
        return unexpected(std::move(e));
      }
      if (!parent) return unexpected(std::move(parent).error());
      cache.directory_missing_ = true;
      return cache;
    }
    if (std::find(listed->begin(), listed->end(), name) == listed->end()) return cache;
    auto lock = fs.lock(cache.path_, io::lock_mode::shared, true);
    if (!lock) return unexpected(std::move(lock).error());
    auto file = fs.open(cache.path_, io::read_only);
    if (!file) return unexpected(std::move(file).error());
    AGENTCTX_TRY(cache.catch_up(**file));
    return cache;
  }

  embedding_cache(embedding_cache&&) = default;
  embedding_cache& operator=(embedding_cache&&) = default;

  const std::string& path() const noexcept { return path_; }
  const embedding_profile& profile() const noexcept { return profile_; }
  /// Entries known to this object (loaded, inserted, or read from others' appends).
  std::size_t size() const noexcept { return rows_.size(); }

  /// The key of `text` under this cache's profile (embedding_cache_key()).
  embedding_cache_digest key_of(std::string_view text) const {
    // The hex form is the one definition of the key; parsing it back cannot fail.
    return parse_embedding_cache_key(embedding_cache_key(profile_json_, text)).value_or(embedding_cache_digest{});
  }

  /// The cached vector of `key` (profile().dim values), or nullopt. The span
  /// is valid until the next insert().
  std::optional<std::span<const float>> find(const embedding_cache_digest& key) const {
    const auto found = rows_.find(key);
    if (found == rows_.end()) return std::nullopt;
    return std::span<const float>(values_).subspan(found->second * dim(), dim());
  }

  /// Stores row i of `rows` (row-major, dim values each) under keys[i], for
  /// the keys not cached yet, durably (the file is synced before this
  /// returns). Repeated keys keep their first vector.
  /// Errors: invalid_argument when rows.size() != keys.size() * dim; the file
  /// system's errors; the header errors of open() when the file was replaced
  /// meanwhile by one for another profile.
  result<void> insert(std::span<const embedding_cache_digest> keys, std::span<const float> rows) {
    if (rows.size() / dim() != keys.size() || rows.size() % dim() != 0) {
      return fail(errc::invalid_argument, "embedding cache: " + std::to_string(rows.size()) + " values for " +
                                              std::to_string(keys.size()) + " keys of dim " + std::to_string(dim()),
                  path_);
    }
    const auto all_present = [&] {
      return std::all_of(keys.begin(), keys.end(), [this](const auto& key) { return rows_.contains(key); });
    };
    if (all_present() && durable_end_ >= valid_end_) return {};

    AGENTCTX_TRY(make_directory());
    auto lock = fs_->lock(path_, io::lock_mode::exclusive, true);
    if (!lock && lock.error().code == errc::not_found) {
      // The directory was removed since (rm -r beside a running server):
      // made again.
      directory_missing_ = true;
      directory_synced_ = false;
      AGENTCTX_TRY(make_directory());
      lock = fs_->lock(path_, io::lock_mode::exclusive, true);
    }
    if (!lock) return unexpected(std::move(lock).error());
    auto opened = fs_->open(path_, io::create_or_open);
    if (!opened) return unexpected(std::move(opened).error());
    io::file& file = **opened;
    AGENTCTX_TRY(catch_up(file));
    auto size = file.size();
    if (!size) return unexpected(std::move(size).error());
    if (!header_valid_) {
      const std::vector<std::byte> header = detail::encode_cache_header(profile_json_, dim());
      // The header is made durable, with the directory entry, before any
      // record is written, so that a record never sits behind a lost header.
      if (*size != 0) AGENTCTX_TRY(file.truncate(0));
      AGENTCTX_TRY(file.append(header));
      AGENTCTX_TRY(file.sync());
      AGENTCTX_TRY(fs_->sync_dir(io::parent_directory(path_)));
      header_valid_ = true;
      valid_end_ = header.size();
      durable_end_ = valid_end_;
    } else if (*size != valid_end_) {
      AGENTCTX_TRY(file.truncate(valid_end_));
    }
    // What this process read but did not write (the header, rows) may be a
    // killed writer's, in the page cache only, the file's name too: made
    // durable before an insert vouches for it, by finding a key there or by
    // appending after it (the append's own sync then covers the bytes).
    const bool read_unsynced = durable_end_ < valid_end_;
    if (all_present()) {
      if (read_unsynced) {
        AGENTCTX_TRY(file.sync());
        AGENTCTX_TRY(fs_->sync_dir(io::parent_directory(path_)));
        durable_end_ = valid_end_;
      }
      return {};
    }

    std::vector<std::byte> records;
    const std::size_t first_new_row = rows_.size();
    byte_writer writer(records);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!rows_.emplace(keys[i], rows_.size()).second) continue;
      const std::span<const float> row = rows.subspan(i * dim(), dim());
      values_.insert(values_.end(), row.begin(), row.end());
      const std::size_t start = writer.size();
      writer.bytes(keys[i].data(), keys[i].size());
      for (const float value : row) writer.f32(value);
      writer.u32(crc32(std::span<const std::byte>(records).subspan(start)));
    }
    auto written = append_synced(file, records);
    if (written && read_unsynced) written = fs_->sync_dir(io::parent_directory(path_));
    if (!written) {
      forget_rows_from(first_new_row);
      return written;
    }
    valid_end_ += records.size();
    durable_end_ = valid_end_;
    return {};
  }

 private:
  embedding_cache(io::file_system& fs, std::string path, const embedding_profile& profile)
      : fs_(&fs), path_(std::move(path)), profile_(profile), profile_json_(cache_key_profile_json(profile)) {}

  std::size_t dim() const noexcept { return profile_.dim; }

  // Before the first insert writes: makes the directory when it was missing
  // at open (create_dir succeeds when another process made it meanwhile),
  // and syncs the folder holding it, once, so that its entry is durable
  // before any record is. When the directory was there at open, the sync is
  // only a precaution (another writer that made it syncs it itself), and a
  // folder this process may not open for it is no error.
  result<void> make_directory() {
    if (directory_synced_) return {};
    const std::string directory = io::parent_directory(path_);
    if (directory_missing_) AGENTCTX_TRY(fs_->create_dir(directory));
    auto synced = fs_->sync_dir(io::parent_directory(directory));
    if (!synced && directory_missing_) return synced;
    directory_missing_ = false;
    directory_synced_ = true;
    return {};
  }

  static result<void> append_synced(io::file& file, std::span<const std::byte> records) {
    AGENTCTX_TRY(file.append(records));
    return file.sync();
  }

  // Drops the rows inserted from `first` on (their append failed): they may
  // not be on disk, and the next insert must try them again.
  void forget_rows_from(std::size_t first) {
    std::erase_if(rows_, [first](const auto& entry) { return entry.second >= first; });
    values_.resize(first * dim());
  }

  // Reads what the file holds beyond what this object has read: the header
  // when it has not seen a valid one, then every intact record. Leaves
  // valid_end_ at the end of the last intact record.
  result<void> catch_up(io::file& file) {
    auto size = file.size();
    if (!size) return unexpected(std::move(size).error());
    if (*size < valid_end_) {  // replaced or cut by someone: read it all again
      header_valid_ = false;
      valid_end_ = 0;
      durable_end_ = 0;
    }
    std::vector<std::byte> bytes(static_cast<std::size_t>(*size - valid_end_));
    auto read = file.read_at(valid_end_, bytes);
    if (!read) return unexpected(std::move(read).error());
    bytes.resize(*read);
    std::span<const std::byte> unread(bytes);
    if (!header_valid_) {
      auto header_size = check_header(unread);
      if (!header_size) return unexpected(std::move(header_size).error());
      if (*header_size == 0) return {};  // no complete header yet: the file counts as empty
      header_valid_ = true;
      valid_end_ = *header_size;
      unread = unread.subspan(*header_size);
    }
    const std::uint64_t record_size = detail::cache_record_size(profile_.dim);
    while (unread.size() >= record_size) {
      const auto record = unread.first(static_cast<std::size_t>(record_size));
      const std::size_t checked = record.size() - detail::cache_checksum_size;
      if (crc32(record.first(checked)) != load_u32(record.data() + checked)) break;
      embedding_cache_digest key;
      std::memcpy(key.data(), record.data(), key.size());
      if (rows_.emplace(key, rows_.size()).second) {
        for (std::size_t i = 0; i < dim(); ++i) values_.push_back(load_f32(record.data() + key.size() + 4 * i));
      }
      unread = unread.subspan(record.size());
      valid_end_ += record_size;
    }
    return {};
  }

  // The header's size when `bytes` (the file from offset 0) starts with this
  // profile's header; 0 when the file counts as empty (no header, a prefix of
  // it, or zeros); an error naming what differs otherwise.
  result<std::size_t> check_header(std::span<const std::byte> bytes) const {
    const std::vector<std::byte> expected = detail::encode_cache_header(profile_json_, dim());
    const std::size_t compared = std::min(bytes.size(), expected.size());
    if (std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(compared), expected.begin())) {
      return compared == expected.size() ? expected.size() : 0;
    }
    if (std::all_of(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(compared),
                    [](std::byte b) { return b == std::byte{0}; })) {
      return std::size_t{0};
    }
    const auto differs = [&](std::size_t offset, std::size_t length) {
      const std::size_t end = std::min(offset + length, compared);
      return offset < compared && !std::equal(bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                                              bytes.begin() + static_cast<std::ptrdiff_t>(end),
                                              expected.begin() + static_cast<std::ptrdiff_t>(offset));
    };
    if (differs(0, 8)) return fail(errc::bad_magic, "not an embedding cache file (bad magic)", path_, 0);
    if (differs(8, 4)) {
      const std::string version = bytes.size() >= 12 ? std::to_string(load_u32(bytes.data() + 8)) : "?";
      return fail(errc::unsupported_version, "embedding cache version " + version + " (this build reads 1)", path_, 8);
    }
    if (differs(12, 4)) {
      const std::string file_dim = bytes.size() >= 16 ? std::to_string(load_u32(bytes.data() + 12)) : "?";
      return fail(errc::incompatible,
                  "embedding cache holds vectors of dim " + file_dim + ", not " + std::to_string(dim()), path_, 12);
    }
    const std::size_t checksum_offset = expected.size() - detail::cache_checksum_size;
    if (differs(16, checksum_offset - 16)) {
      return fail(errc::incompatible, "embedding cache belongs to another embedding profile than " +
                                          describe(profile_),
                  path_, 16);
    }
    if (differs(checksum_offset, detail::cache_checksum_size)) {
      return fail(errc::checksum_mismatch, "embedding cache header checksum mismatch", path_, checksum_offset);
    }
    return fail(errc::corrupt, "embedding cache header is damaged", path_, 0);
  }

  io::file_system* fs_;
  std::string path_;
  embedding_profile profile_;
  std::string profile_json_;
  bool directory_missing_ = false;  // at open: insert() makes it (path_'s folder)
  bool directory_synced_ = false;   // make_directory() has run
  bool header_valid_ = false;
  std::uint64_t valid_end_ = 0;  // end of the header and intact records read so far
  std::uint64_t durable_end_ = 0;  // how much of the file this process has synced (or written and synced)
  std::unordered_map<embedding_cache_digest, std::size_t, detail::digest_hash> rows_;  // key -> row index
  std::vector<float> values_;                                                           // rows, row-major
};

}  // namespace agentctx::agdb
