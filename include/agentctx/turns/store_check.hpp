// agentctx/turns/store_check.hpp: a full consistency check of a turn store,
// and its repair (`ctxstore fsck [--repair]`).
//
// Without repair the store is opened read-only (no lock, nothing written; a
// live writer may be appending, in which case a torn tail may just be a write
// in flight). The check reports what recovery would cut, then verifies
// what recovery trusts without reading: every turn record (CRC, id, parent
// earlier, depth = parent's depth + 1, payload blob present), every blob
// record in the pack (CRC, decompression, SHA-256 = its hash, and its index
// entry), and every context head against its turn. (Head records already
// folded into heads.snap are not re-read; a repair replays them all.)
//
// With repair the store is opened as its writer with repair_damage set, so
// recovery also cuts damage inside the checkpointed prefix; the derived files
// (blob index runs and manifest, turns.idx, heads.snap) are then rebuilt from
// the truth, and the check runs again on the result.
//
//   auto report = check_store(fs, "store", {.repair = false});
//   if (report && !report->ok()) for (auto& p : report->problems) ...
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/turns/detail/pack_records.hpp"
#include "agentctx/turns/turn_store.hpp"

namespace agentctx::turns {

struct check_options {
  bool repair = false;
  store_options store;  ///< read_only and repair_damage are set by check_store
};

struct check_problem {
  std::string file;
  std::uint64_t offset = error::no_offset;
  std::string message;
};

struct check_report {
  /// What open() found (with repair: what it cut and rewrote).
  recovery_report recovery;
  std::uint64_t turns_checked = 0;
  std::uint64_t blobs_checked = 0;
  std::uint64_t duplicate_blob_records = 0;  ///< harmless: a second copy of a stored blob
  std::uint64_t contexts_checked = 0;
  /// Damage found by the full check (after repair: what is still wrong).
  std::vector<check_problem> problems;
  bool repaired = false;

  /// Nothing is wrong now: no problem found, and recovery had nothing to cut
  /// (or, after a repair, cut what it had to).
  bool ok() const noexcept { return problems.empty() && (repaired || recovery.clean()); }
};

namespace detail {

inline result<void> verify_store(turn_store& store, io::file_system& fs, check_report& report) {
  const std::string pack_path = io::join_path(store.directory(), pack_file_name);
  auto problem = [&](std::string file, std::uint64_t offset, std::string message) {
    report.problems.push_back({std::move(file), offset, std::move(message)});
  };
  // Turns.
  turn_id last = store.last_turn();
  std::vector<std::uint32_t> depths(static_cast<std::size_t>(last) + 1, 0);
  std::vector<bool> good(static_cast<std::size_t>(last) + 1, false);
  const std::string log_path = io::join_path(store.directory(), turn_log_file_name);
  for (turn_id id = 1; id <= last; ++id) {
    ++report.turns_checked;
    auto t = store.get_turn(id);
    if (!t) {
      problem(log_path, turn_record_offset(id), t.error().message);
      continue;
    }
    depths[id] = t->depth;
    good[id] = true;
    if (t->parent >= id) {
      problem(log_path, turn_record_offset(id), "turn " + std::to_string(id) + " names a parent that is not earlier");
    } else if (t->parent == 0 ? t->depth != 0 : (good[t->parent] && t->depth != depths[t->parent] + 1)) {
      problem(log_path, turn_record_offset(id), "turn " + std::to_string(id) + " has depth " +
                                                    std::to_string(t->depth) + ", not its parent's plus one");
    }
    if (!store.find_blob(t->payload_hash)) {
      problem(log_path, turn_record_offset(id), "turn " + std::to_string(id) + " names a blob that is not stored");
    }
  }
  // Blob records, read straight from the pack.
  auto pack = fs.open(pack_path, io::read_only);
  if (!pack) return unexpected(std::move(pack).error());
  std::uint64_t end = store.recovery().pack_valid_end;
  std::vector<std::byte> record;
  std::string damage;
  zstd_codec_pool codecs;
  for (std::uint64_t offset = file_header_size; offset < end;) {
    blob_record_header header;
    AGENTCTX_TRY(read_pack_record(**pack, offset, end, header, record, damage));
    if (!damage.empty()) {
      problem(pack_path, offset, damage);
      // A record whose header holds but whose bytes do not: the next one
      // can still be found and checked. Anything else ends the walk.
      if (damage == checksum_problem) {
        ++report.blobs_checked;
        offset += header.record_size();
        continue;
      }
      break;
    }
    ++report.blobs_checked;
    auto raw = decode_payload(header, record, codecs);
    if (!raw) problem(pack_path, offset, "blob " + to_hex(header.hash) + ": " + raw.error().message);
    auto indexed = store.find_blob(header.hash);
    if (!indexed) {
      problem(pack_path, offset, "blob " + to_hex(header.hash) + " is missing from the index");
    } else if (indexed->offset != offset) {
      auto kept = store.get_blob(header.hash);
      if (kept) {
        ++report.duplicate_blob_records;
      } else {
        problem(pack_path, indexed->offset, "the index points at a bad record for blob " + to_hex(header.hash));
      }
    }
    offset += header.record_size();
  }
  // Heads.
  const std::string heads_path = io::join_path(store.directory(), head_log_file_name);
  for (const context_head& h : store.contexts()) {
    ++report.contexts_checked;
    if (h.head == 0) {
      if (h.depth != 0) problem(heads_path, error::no_offset, "empty context " + to_hex_id(h.id) + " has a depth");
      continue;
    }
    auto t = store.get_turn(h.head);
    if (!t) {
      problem(heads_path, error::no_offset, "context " + to_hex_id(h.id) + " names turn " + std::to_string(h.head) +
                                                ": " + t.error().message);
    } else if (t->depth != h.depth) {
      problem(heads_path, error::no_offset, "context " + to_hex_id(h.id) + " records depth " +
                                                std::to_string(h.depth) + " but its head is at " +
                                                std::to_string(t->depth));
    }
  }
  return {};
}

}  // namespace detail

/// Errors: not_found (no store), locked (repair while a writer runs), I/O.
/// Damage is reported in the check_report, not as an error.
inline result<check_report> check_store(io::file_system& fs, const std::string& dir,
                                        const check_options& options = {}) {
  check_report report;
  store_options opened = options.store;
  opened.read_only = !options.repair;
  opened.repair_damage = true;  // report what a repair would cut instead of refusing to open
  if (options.repair) {
    // One open as the writer that verifies everything from the truth, cuts
    // what is damaged and rewrites the derived files.
    store_options repairing = opened;
    repairing.rebuild_derived = true;
    auto store = turn_store::open(fs, dir, repairing);
    if (!store) return unexpected(std::move(store).error());
    report.recovery = (*store)->recovery();
    AGENTCTX_TRY((*store)->close());
    report.repaired = true;
    opened.read_only = true;
  }
  auto store = turn_store::open(fs, dir, opened);
  if (!store) return unexpected(std::move(store).error());
  if (!options.repair) report.recovery = (*store)->recovery();
  AGENTCTX_TRY(detail::verify_store(**store, fs, report));
  return report;
}

}  // namespace agentctx::turns
