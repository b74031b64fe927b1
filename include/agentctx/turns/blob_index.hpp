// agentctx/turns/blob_index.hpp: hash -> location of a blob in blobs.pack.
//
// The pack is the truth; this index is derived from it and rebuilt when
// missing or damaged. It has two parts:
//   - sealed runs (files "blobs.idx.N"): immutable sorted tables, git pack
//     .idx style: a fanout table over the first 0-16 bits of the hash, the
//     sorted hashes, then the locations. A lookup is a fanout range plus a
//     binary search in mapped memory; nothing is loaded into the heap;
//   - the tail: an in-memory hash table of the blobs appended since the runs
//     were last sealed (bounded by the store's seal threshold).
// The manifest "blobs.idx" names the runs and the pack offset they cover; it
// is replaced by an atomic rename, after which obsolete runs are removed.
// When a run is sealed, runs are merged while the older of the two newest is
// at most twice the size of the newer, so there are O(log n) runs.
//
// Thread-safety: none inside; the turn store guards an index with its own
// lock (many find() calls at once are fine; add() and seal() need exclusion).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agentctx/core/crc32.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/turns/format.hpp"

namespace agentctx::turns {

/// std::hash for blob hashes: the digest's first 8 bytes are already uniform.
struct blob_hash_hasher {
  std::size_t operator()(const blob_hash& h) const noexcept {
    std::uint64_t v;
    std::memcpy(&v, h.data(), sizeof v);
    return static_cast<std::size_t>(v);
  }
};

namespace detail {

inline std::string index_run_file_name(std::uint64_t number) {
  return std::string(index_manifest_file_name) + "." + std::to_string(number);
}

/// Run layout after the 32-byte file header: entry_count u64, fanout_bits u32,
/// reserved u32, fanout u32[2^bits] (cumulative counts), hashes [count][32],
/// entries [count][20], crc32 of everything after the file header.
inline constexpr std::size_t index_run_fixed_size = file_header_size + 16 + 4;

inline unsigned fanout_bits_for(std::uint64_t count) noexcept {
  unsigned bits = 0;
  while (bits < 16 && (std::uint64_t{2} << bits) <= count) ++bits;
  return bits;
}

inline std::uint32_t hash_prefix(const std::byte* hash, unsigned bits) noexcept {
  if (bits == 0) return 0;
  std::uint32_t top = (static_cast<std::uint32_t>(hash[0]) << 8) | static_cast<std::uint32_t>(hash[1]);
  return top >> (16 - bits);
}

/// One sealed run, mapped read-only.
class index_run {
 public:
  /// Maps and fully validates the run at `path` (size, header, salt, fanout,
  /// sort order, CRC, every location below `pack_end`).
  static result<std::shared_ptr<const index_run>> load(io::file_system& fs, const std::string& path,
                                                      const store_salt& salt, std::uint64_t expected_count,
                                                      std::uint64_t pack_end) {
    auto mapped = fs.map(path);
    if (!mapped) return unexpected(std::move(mapped).error());
    auto run = std::make_shared<index_run>();
    run->bytes_ = std::move(*mapped);
    std::span<const std::byte> b = run->bytes_.bytes();
    auto bad = [&](std::string what) { return fail(errc::corrupt, "blob index run: " + what, path); };
    file_header header;
    if (b.size() < index_run_fixed_size) return bad("shorter than its fixed part");
    if (decode_file_header(b, index_run_magic, header) != header_problem::none) return bad("bad file header");
    if (header.salt != salt) return bad("belongs to another store");
    const std::byte* p = b.data() + file_header_size;
    run->count_ = load_u64(p);
    run->bits_ = load_u32(p + 8);
    if (run->bits_ > 16 || load_u32(p + 12) != 0) return bad("bad fanout");
    if (run->count_ != expected_count) return bad("entry count differs from the manifest");
    std::uint64_t fanout_size = std::uint64_t{4} << run->bits_;
    if (run->count_ > (b.size() / (32 + index_entry_size))) return bad("entry count larger than the file");
    std::uint64_t expected = index_run_fixed_size + fanout_size + run->count_ * (32 + index_entry_size);
    if (b.size() != expected) return bad("size does not match its entry count");
    if (load_u32(b.data() + b.size() - 4) != crc32(b.subspan(file_header_size, b.size() - file_header_size - 4))) {
      return bad("checksum mismatch");
    }
    run->fanout_ = p + 16;
    run->hashes_ = run->fanout_ + fanout_size;
    run->entries_ = run->hashes_ + run->count_ * 32;
    std::uint32_t previous = 0;
    for (std::uint64_t i = 0; i < (std::uint64_t{1} << run->bits_); ++i) {
      std::uint32_t v = load_u32(run->fanout_ + 4 * i);
      if (v < previous || v > run->count_) return bad("fanout is not monotonic");
      previous = v;
    }
    if (previous != run->count_) return bad("fanout does not end at the entry count");
    for (std::uint64_t i = 0; i < run->count_; ++i) {
      const std::byte* h = run->hashes_ + 32 * i;
      if (i > 0 && std::memcmp(h - 32, h, 32) >= 0) return bad("hashes not strictly sorted");
      std::uint32_t prefix = hash_prefix(h, run->bits_);
      std::uint32_t lo = prefix == 0 ? 0 : load_u32(run->fanout_ + 4 * (prefix - 1));
      std::uint32_t hi = load_u32(run->fanout_ + 4 * prefix);
      if (i < lo || i >= hi) return bad("fanout disagrees with the hashes");
      blob_location l = decode_index_entry(run->entries_ + index_entry_size * i);
      if (load_u16(run->entries_ + index_entry_size * i + 18) != 0) return bad("an entry's reserved field is set");
      if (l.offset < file_header_size || l.offset > pack_end || l.record_size() > pack_end - l.offset) {
        return bad("a location lies outside the covered pack");
      }
    }
    return std::shared_ptr<const index_run>(std::move(run));
  }

  std::optional<blob_location> find(const blob_hash& hash) const noexcept {
    const auto* key = reinterpret_cast<const std::byte*>(hash.data());
    std::uint32_t prefix = hash_prefix(key, bits_);
    std::uint64_t lo = prefix == 0 ? 0 : load_u32(fanout_ + 4 * (prefix - 1));
    std::uint64_t hi = load_u32(fanout_ + 4 * prefix);
    while (lo < hi) {
      std::uint64_t mid = lo + (hi - lo) / 2;
      int c = std::memcmp(hashes_ + 32 * mid, key, 32);
      if (c == 0) return decode_index_entry(entries_ + index_entry_size * mid);
      if (c < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return std::nullopt;
  }

  std::uint64_t size() const noexcept { return count_; }
  const std::byte* hash_at(std::uint64_t i) const noexcept { return hashes_ + 32 * i; }
  blob_location location_at(std::uint64_t i) const noexcept {
    return decode_index_entry(entries_ + index_entry_size * i);
  }

 private:
  io::mapped_bytes bytes_;
  std::uint64_t count_ = 0;
  unsigned bits_ = 0;
  const std::byte* fanout_ = nullptr;
  const std::byte* hashes_ = nullptr;
  const std::byte* entries_ = nullptr;
};

/// A sorted sequence of (hash, location) that can be walked several times.
struct sorted_entries {
  std::uint64_t count = 0;
  /// Calls visit(hash bytes, location) for every entry in hash order.
  std::function<void(const std::function<void(const std::byte*, const blob_location&)>&)> walk;
};

/// Writes a run holding `entries` to `path` atomically and durably.
inline result<void> write_index_run(io::file_system& fs, const std::string& path, const store_salt& salt,
                                    const sorted_entries& entries) {
  unsigned bits = fanout_bits_for(entries.count);
  std::vector<std::uint32_t> fanout(std::size_t{1} << bits, 0);
  entries.walk([&](const std::byte* hash, const blob_location&) { ++fanout[hash_prefix(hash, bits)]; });
  std::uint32_t running = 0;
  for (auto& v : fanout) {
    running += v;
    v = running;
  }
  auto writer = io::atomic_file_writer::begin(fs, path);
  if (!writer) return unexpected(std::move(writer).error());
  std::byte head[file_header_size + 16];
  encode_file_header(head, {index_run_magic, salt});
  store_u64(head + file_header_size, entries.count);
  store_u32(head + file_header_size + 8, bits);
  store_u32(head + file_header_size + 12, 0);
  AGENTCTX_TRY(writer->append(head));
  crc32_hasher crc;
  crc.update(std::span<const std::byte>(head + file_header_size, 16));
  std::vector<std::byte> buffer;
  buffer.reserve(64 * 1024);
  auto flush = [&]() -> result<void> {
    crc.update(buffer);
    auto r = writer->append(buffer);
    buffer.clear();
    return r;
  };
  for (std::uint32_t v : fanout) {
    std::byte four[4];
    store_u32(four, v);
    buffer.insert(buffer.end(), four, four + 4);
  }
  AGENTCTX_TRY(flush());
  result<void> status;
  entries.walk([&](const std::byte* hash, const blob_location&) {
    buffer.insert(buffer.end(), hash, hash + 32);
    if (buffer.size() >= 60 * 1024 && status) status = flush();
  });
  AGENTCTX_TRY(status);
  entries.walk([&](const std::byte*, const blob_location& l) {
    std::byte e[index_entry_size];
    encode_index_entry(e, l);
    buffer.insert(buffer.end(), e, e + index_entry_size);
    if (buffer.size() >= 60 * 1024 && status) status = flush();
  });
  AGENTCTX_TRY(status);
  AGENTCTX_TRY(flush());
  std::byte tail[4];
  store_u32(tail, crc.value());
  AGENTCTX_TRY(writer->append(tail));
  return writer->commit();
}

struct manifest_run {
  std::uint64_t number = 0;
  std::uint64_t count = 0;
};

/// Manifest after the file header: covered_end u64, run_count u32, reserved
/// u32, run_count x (number u64, entry_count u64), crc32 of all after the header.
inline std::vector<std::byte> encode_manifest(const store_salt& salt, std::uint64_t covered_end,
                                              const std::vector<manifest_run>& runs) {
  std::vector<std::byte> out(file_header_size + 16 + 16 * runs.size() + 4);
  encode_file_header(out.data(), {index_manifest_magic, salt});
  std::byte* p = out.data() + file_header_size;
  store_u64(p, covered_end);
  store_u32(p + 8, static_cast<std::uint32_t>(runs.size()));
  store_u32(p + 12, 0);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    store_u64(p + 16 + 16 * i, runs[i].number);
    store_u64(p + 24 + 16 * i, runs[i].count);
  }
  store_u32(out.data() + out.size() - 4,
            crc32(std::span<const std::byte>(out).subspan(file_header_size, out.size() - file_header_size - 4)));
  return out;
}

inline result<std::pair<std::uint64_t, std::vector<manifest_run>>> decode_manifest(std::span<const std::byte> b,
                                                                                  const store_salt& salt) {
  auto bad = [](std::string what) { return fail(errc::corrupt, "blob index manifest: " + what); };
  file_header header;
  if (b.size() < file_header_size + 20) return bad("too short");
  if (decode_file_header(b, index_manifest_magic, header) != header_problem::none) return bad("bad file header");
  if (header.salt != salt) return bad("belongs to another store");
  const std::byte* p = b.data() + file_header_size;
  std::uint32_t count = load_u32(p + 8);
  if (load_u32(p + 12) != 0) return bad("reserved field set");
  if (b.size() != file_header_size + 16 + 16 * std::uint64_t{count} + 4) return bad("size does not match");
  if (load_u32(b.data() + b.size() - 4) != crc32(b.subspan(file_header_size, b.size() - file_header_size - 4))) {
    return bad("checksum mismatch");
  }
  std::vector<manifest_run> runs(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    runs[i].number = load_u64(p + 16 + 16 * i);
    runs[i].count = load_u64(p + 24 + 16 * i);
    if (i > 0 && runs[i].number <= runs[i - 1].number) return bad("run numbers not increasing");
  }
  return std::pair{load_u64(p), std::move(runs)};
}

}  // namespace detail

class blob_index {
 public:
  /// An empty index covering nothing (the pack is scanned from its header).
  blob_index() = default;

  /// Loads the manifest in `dir` and maps its runs. A missing manifest gives
  /// an empty index; a damaged one, or a run that is missing, damaged or
  /// reaches past `pack_size`, gives an empty index too (the caller rescans
  /// the pack) and sets `problem` to why. I/O errors other than not_found are
  /// returned.
  static result<blob_index> load(io::file_system& fs, const std::string& dir, const store_salt& salt,
                                 std::uint64_t pack_size, std::string* problem = nullptr) {
    blob_index index;
    std::string manifest_path = io::join_path(dir, index_manifest_file_name);
    auto mapped = fs.map(manifest_path);
    if (!mapped) {
      if (mapped.error().code == errc::not_found) return index;
      return unexpected(std::move(mapped).error());
    }
    auto give_up = [&](const error& e) {
      if (problem) *problem = e.describe();
      return blob_index{};
    };
    auto manifest = detail::decode_manifest(mapped->bytes(), salt);
    if (!manifest) return give_up(manifest.error().with_path(manifest_path));
    auto& [covered_end, runs] = *manifest;
    if (covered_end < file_header_size || covered_end > pack_size) {
      return give_up(make_error(errc::corrupt, "blob index covers more of the pack than exists", manifest_path));
    }
    for (const auto& r : runs) {
      auto run = detail::index_run::load(fs, io::join_path(dir, detail::index_run_file_name(r.number)), salt,
                                         r.count, covered_end);
      if (!run) {
        const error& e = run.error();
        if (e.code != errc::not_found && !is_data_error(e.code)) return unexpected(run.error());
        return give_up(e);
      }
      index.runs_.push_back(std::move(*run));
      index.run_numbers_.push_back(r);
    }
    index.covered_end_ = covered_end;
    index.next_run_number_ = runs.empty() ? 1 : runs.back().number + 1;
    return index;
  }

  std::optional<blob_location> find(const blob_hash& hash) const {
    if (auto it = tail_.find(hash); it != tail_.end()) return it->second;
    for (auto run = runs_.rbegin(); run != runs_.rend(); ++run) {
      if (auto found = (*run)->find(hash)) return found;
    }
    return std::nullopt;
  }

  /// Adds a blob appended at or after covered_end() to the tail.
  void add(const blob_hash& hash, const blob_location& location) { tail_.emplace(hash, location); }

  /// The pack offset up to which the sealed runs hold every blob.
  std::uint64_t covered_end() const noexcept { return covered_end_; }
  std::size_t tail_size() const noexcept { return tail_.size(); }
  std::size_t run_count() const noexcept { return runs_.size(); }
  std::uint64_t size() const noexcept {
    std::uint64_t n = tail_.size();
    for (const auto& r : run_numbers_) n += r.count;
    return n;
  }

  /// Seals the tail into a new run covering the pack up to `pack_end` (every
  /// tail entry must lie below it and be durable), merges runs per the size
  /// policy, replaces the manifest, then removes runs no longer listed.
  /// On failure the index in memory is unchanged and still correct.
  result<void> seal(io::file_system& fs, const std::string& dir, const store_salt& salt, std::uint64_t pack_end) {
    std::vector<std::pair<blob_hash, blob_location>> sorted(tail_.begin(), tail_.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    auto runs = runs_;
    auto numbers = run_numbers_;
    std::uint64_t next = next_run_number_;
    std::vector<std::uint64_t> obsolete;
    if (!sorted.empty()) {
      detail::sorted_entries entries{sorted.size(), [&](const auto& visit) {
                                       for (const auto& [hash, location] : sorted) {
                                         visit(reinterpret_cast<const std::byte*>(hash.data()), location);
                                       }
                                     }};
      AGENTCTX_TRY(add_run(fs, dir, salt, pack_end, entries, next, runs, numbers));
    }
    while (runs.size() >= 2 && numbers[numbers.size() - 2].count <= 2 * numbers.back().count) {
      const auto older = runs[runs.size() - 2];
      const auto newer = runs.back();
      detail::sorted_entries merged{older->size() + newer->size(), [&](const auto& visit) {
                                      std::uint64_t i = 0, j = 0;
                                      while (i < older->size() || j < newer->size()) {
                                        bool take_older =
                                            j == newer->size() ||
                                            (i < older->size() &&
                                             std::memcmp(older->hash_at(i), newer->hash_at(j), 32) < 0);
                                        if (take_older) {
                                          visit(older->hash_at(i), older->location_at(i));
                                          ++i;
                                        } else {
                                          visit(newer->hash_at(j), newer->location_at(j));
                                          ++j;
                                        }
                                      }
                                    }};
      obsolete.push_back(numbers[numbers.size() - 2].number);
      obsolete.push_back(numbers.back().number);
      runs.resize(runs.size() - 2);
      numbers.resize(numbers.size() - 2);
      AGENTCTX_TRY(add_run(fs, dir, salt, pack_end, merged, next, runs, numbers));
    }
    auto manifest = detail::encode_manifest(salt, pack_end, numbers);
    AGENTCTX_TRY(io::write_file_atomically(fs, io::join_path(dir, index_manifest_file_name), manifest));
    runs_ = std::move(runs);
    run_numbers_ = std::move(numbers);
    next_run_number_ = next;
    covered_end_ = pack_end;
    tail_.clear();
    // Readers may still map the old runs; a mapping outlives the file's removal.
    for (std::uint64_t number : obsolete) {
      (void)fs.remove(io::join_path(dir, detail::index_run_file_name(number)));
    }
    return remove_unlisted_runs(fs, dir);
  }

  /// Removes run files the manifest does not list (left by a crash mid-seal).
  result<void> remove_unlisted_runs(io::file_system& fs, const std::string& dir) const {
    auto names = fs.list_dir(dir);
    if (!names) return unexpected(std::move(names).error());
    std::string prefix = std::string(index_manifest_file_name) + ".";
    for (const auto& name : *names) {
      if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
      std::string_view digits = std::string_view(name).substr(prefix.size());
      if (digits.find_first_not_of("0123456789") != std::string_view::npos) continue;
      bool listed = std::any_of(run_numbers_.begin(), run_numbers_.end(),
                                [&](const auto& r) { return std::to_string(r.number) == digits; });
      if (!listed) (void)fs.remove(io::join_path(dir, name));
    }
    return {};
  }

 private:
  static result<void> add_run(io::file_system& fs, const std::string& dir, const store_salt& salt,
                              std::uint64_t pack_end, const detail::sorted_entries& entries, std::uint64_t& next,
                              std::vector<std::shared_ptr<const detail::index_run>>& runs,
                              std::vector<detail::manifest_run>& numbers) {
    std::uint64_t number = next++;
    std::string path = io::join_path(dir, detail::index_run_file_name(number));
    AGENTCTX_TRY(detail::write_index_run(fs, path, salt, entries));
    auto run = detail::index_run::load(fs, path, salt, entries.count, pack_end);
    if (!run) return unexpected(std::move(run).error());
    runs.push_back(std::move(*run));
    numbers.push_back({number, entries.count});
    return {};
  }

  std::vector<std::shared_ptr<const detail::index_run>> runs_;  // oldest first
  std::vector<detail::manifest_run> run_numbers_;
  std::unordered_map<blob_hash, blob_location, blob_hash_hasher> tail_;
  std::uint64_t covered_end_ = file_header_size;
  std::uint64_t next_run_number_ = 1;
};

}  // namespace agentctx::turns
