// agentctx/turns/turn_store.hpp: the turn DAG plus content-addressed blob
// store of seed 002 (docs/format/turn-store.md), embedded: no server.
//
// A store is a directory. Turns are immutable records that point at their
// parent; a context is a mutable pointer to a head turn, so forking is O(1)
// and copies nothing. Payloads live in an append-only pack keyed by SHA-256:
// identical payloads are stored once across every context.
//
//   AGENTCTX_TRY(turn_store::init(fs, "store"));
//   auto store = turn_store::open(fs, "store");        // writer: takes store.lock
//   auto ctx = (*store)->create_context();             // empty context
//   auto id = (*store)->append(ctx->id, payload);      // durable when it returns
//   auto page = (*store)->last(ctx->id, 64);            // chronological
//   auto bytes = (*store)->read_payload(page->turns.back());
//
// Durability: append() returns a TurnID only after the payload's blob record
// and the turn record are synced and the context's new head is synced
// after them; a turn is never visible through a head before it is durable.
// Concurrent appenders share syncs (group commit: one thread syncs the pack
// and the turn log at the same time, then the head log, for everyone waiting).
//
// Processes: one writer per store (flock on store.lock; a second writer gets
// errc::locked "store is locked by pid N", or waits with wait_for_lock); any
// number of readers (options.read_only) that take no lock, write nothing and
// see a consistent prefix as of open() or refresh().
//
// Recovery runs inside open() and is idempotent: a torn tail of the pack, the
// turn log or the head log is cut at the last valid record; turns whose
// blob did not survive are dropped; a head that points past the surviving
// turns falls back to the context's previous head; the blob index is caught up
// from the pack. What the last checkpoint (turns.idx) recorded as durable is
// never cut automatically: when recovery would have to cut into it (a file
// shorter than the checkpoint, a damaged head record before its mark), open()
// fails with a corrupt error and `ctxstore fsck --repair` (check_store with
// repair) decides. Checkpointed records are not re-read at open; damage inside
// them is reported by the read that meets it, and by fsck.
//
// Thread-safety: every member function except close() (and the destructor)
// may be called from any number of threads at once; close() must not overlap
// other calls. Appends to different contexts run in parallel and share
// syncs; appends to one context are serialised (per-context lock), so each
// one's parent is the previous one's turn. TurnIDs are assigned by a single
// sequencer in write order. Reads never wait for a sync of the logs; they
// wait only while the commit leader writes a derived file (an index run every
// seal_threshold new blobs, a checkpoint, a head snapshot).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agentctx/core/crc32.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/core/zstd_codec.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/io/writer_lock.hpp"
#include "agentctx/turns/blob_index.hpp"
#include "agentctx/turns/detail/blob_cache.hpp"
#include "agentctx/turns/detail/pack_records.hpp"
#include "agentctx/turns/detail/sync_worker.hpp"
#include "agentctx/turns/format.hpp"

namespace agentctx::turns {

struct store_options {
  /// Open as a reader: no lock, no writes; recovery is computed, not applied.
  bool read_only = false;
  /// Writer: wait for another writer to finish instead of failing with locked.
  bool wait_for_lock = false;
  /// Allow recovery to cut damage inside the checkpointed prefix (fsck --repair).
  bool repair_damage = false;
  /// Ignore the derived files (blob index, turns.idx, heads.snap): verify
  /// everything from the truth; a writer then rewrites them (fsck --repair).
  bool rebuild_derived = false;
  /// zstd level for new blobs (seed 4.3: 1..3).
  int zstd_level = 1;
  /// Larger payloads are refused by append(). Reading has no such limit (a
  /// store written with a larger one stays readable): recorded lengths are
  /// checked against the file and the zstd frame instead.
  std::uint32_t max_payload_bytes = std::uint32_t{256} << 20;
  /// Blobs in the in-memory index tail before it is sealed into a run.
  std::size_t seal_threshold = 4096;
  /// Head records after the last snapshot before heads.snap is rewritten
  /// (at least this many, and at least twice the number of contexts).
  std::uint64_t snapshot_threshold = 65536;
  /// Bytes of decompressed payloads kept in memory for repeated reads (an LRU); 0: none.
  std::size_t blob_cache_bytes = std::size_t{8} << 20;
  /// Turns after the last checkpoint before turns.idx is rewritten.
  std::uint64_t checkpoint_interval = 16384;
  /// Wall clock in Unix ms (created_at of turns and contexts); default: now.
  std::function<std::uint64_t()> clock;
  /// Random source for context ids and the store salt; default: random_device.
  std::function<std::uint64_t()> random;
};

struct append_options {
  /// The new turn's parent; default: the context's head. The context's head
  /// moves to the new turn either way.
  std::optional<turn_id> parent;
  std::uint64_t type_tag = 0;
  std::uint32_t codec = 0;  ///< the caller's CodecTag
  std::uint32_t flags = 0;
};

/// A page of turns, oldest first.
struct turn_page {
  std::vector<turn> turns;
  /// Pass to before() for the page before this one; 0 when the root was reached.
  turn_id next_cursor = 0;
  std::uint32_t head_depth = 0;  ///< depth of the context's head
  turn_id head = 0;              ///< the context's head when the page was read
};

/// What open() found and (for a writer) repaired.
struct recovery_report {
  std::uint64_t pack_valid_end = 0;         ///< bytes of blobs.pack kept
  std::uint64_t pack_cut_bytes = 0;         ///< torn or damaged bytes after them
  std::uint64_t turns = 0;                  ///< turns kept
  std::uint64_t turns_dropped = 0;          ///< whole records dropped (bad CRC, missing blob, ...)
  std::uint64_t log_cut_bytes = 0;          ///< bytes of turns.log cut
  std::uint64_t head_records = 0;           ///< valid head records replayed (after the snapshot)
  std::uint64_t head_records_dropped = 0;   ///< records naming a turn that did not survive
  std::uint64_t head_log_cut_bytes = 0;
  std::uint64_t blobs_indexed_from_pack = 0;  ///< pack records added to the index tail
  bool snapshot_used = false;
  bool index_rebuilt = false;               ///< the index was missing or damaged
  std::string index_problem;
  std::string first_problem;                ///< the first damage found, for messages
  bool applied = false;                     ///< a writer applied the repairs

  bool clean() const noexcept {
    return pack_cut_bytes == 0 && turns_dropped == 0 && log_cut_bytes == 0 && head_records_dropped == 0 &&
           head_log_cut_bytes == 0 && !index_rebuilt;
  }
};

struct store_stats {
  std::uint64_t turns = 0;
  std::uint64_t contexts = 0;
  std::uint64_t blobs = 0;
  std::uint64_t blob_raw_bytes = 0;     ///< sum of raw_len over distinct blobs
  std::uint64_t blob_stored_bytes = 0;  ///< sum of stored_len over distinct blobs
  std::uint64_t payload_bytes = 0;      ///< sum of raw_len over all turns (before dedup)
  std::uint64_t pack_bytes = 0;
  std::uint64_t turn_log_bytes = 0;
  std::uint64_t head_log_bytes = 0;
  std::uint64_t index_runs = 0;
  std::uint64_t index_tail = 0;
  /// payload_bytes / blob_raw_bytes (1 when nothing is stored).
  double dedup_ratio() const noexcept {
    return blob_raw_bytes == 0 ? 1.0 : static_cast<double>(payload_bytes) / static_cast<double>(blob_raw_bytes);
  }
  /// blob_raw_bytes / blob_stored_bytes.
  double compression_ratio() const noexcept {
    return blob_stored_bytes == 0 ? 1.0
                                  : static_cast<double>(blob_raw_bytes) / static_cast<double>(blob_stored_bytes);
  }
};

namespace detail {

inline std::uint64_t default_random() {
  static std::mutex mutex;
  static std::random_device device;
  static std::mt19937_64 engine((std::uint64_t{device()} << 32) ^ device());
  std::lock_guard guard(mutex);
  return engine();
}

inline error store_error(errc code, std::string message, const std::string& path = {},
                         std::uint64_t offset = error::no_offset) {
  return make_error(code, std::move(message), path, offset);
}

}  // namespace detail

class turn_store {
 public:
  turn_store(const turn_store&) = delete;
  turn_store& operator=(const turn_store&) = delete;
  ~turn_store() { (void)close(); }

  /// Creates an empty store in `dir` (created if missing; its parent must
  /// exist). Errors: already_exists when `dir` already holds a store, locked,
  /// and I/O errors.
  static result<void> init(io::file_system& fs, const std::string& dir, const store_options& options = {}) {
    AGENTCTX_TRY(fs.create_dir(dir));
    AGENTCTX_TRY(fs.sync_dir(io::parent_directory(dir)));  // the new folder itself must survive a crash
    auto lock = io::acquire_writer_lock(fs, io::join_path(dir, lock_file_name), false);
    if (!lock) return unexpected(std::move(lock).error());
    std::string heads_path = io::join_path(dir, head_log_file_name);
    auto exists = fs.exists(heads_path);
    if (!exists) return unexpected(std::move(exists).error());
    if (*exists) return fail(errc::already_exists, "a turn store already exists here", dir);
    // Never overwrite the data of a store that lost its heads.log.
    for (std::string_view name : {pack_file_name, turn_log_file_name}) {
      auto size = fs.file_size(io::join_path(dir, name));
      if (size && *size > file_header_size) {
        return fail(errc::already_exists, "the folder holds store data (" + std::string(name) +
                                              ") but no heads.log: not replacing it", dir);
      }
    }
    auto random = options.random ? options.random : detail::default_random;
    store_salt salt;
    for (std::size_t i = 0; i < salt.size(); i += 8) {
      std::uint64_t r = random();
      std::memcpy(salt.data() + i, &r, 8);
    }
    // heads.log is written last: it marks a complete store.
    for (auto [name, magic] : {std::pair{pack_file_name, pack_magic}, std::pair{turn_log_file_name, turn_log_magic},
                               std::pair{head_log_file_name, head_log_magic}}) {
      std::byte header[file_header_size];
      encode_file_header(header, {magic, salt});
      AGENTCTX_TRY(io::write_file_atomically(fs, io::join_path(dir, name), header));
    }
    return {};
  }

  /// Opens the store in `dir` as its writer (default) or as a reader, and
  /// recovers (see the file comment). Errors: not_found (no store), locked,
  /// corrupt and the other data errors (damage recovery may not cut), I/O.
  static result<std::unique_ptr<turn_store>> open(io::file_system& fs, const std::string& dir,
                                                  store_options options = {}) {
    std::unique_ptr<turn_store> store(new turn_store(fs, dir, std::move(options)));
    AGENTCTX_TRY(store->open_files());
    AGENTCTX_TRY(store->load_view());
    if (store->writer_) AGENTCTX_TRY(store->apply_recovery());
    return store;
  }

  /// Seals the index tail, checkpoints and releases the lock (writer). Later
  /// calls fail. Called by the destructor; safe to call twice.
  result<void> close() {
    if (closed_) return {};
    closed_ = true;
    result<void> status;
    if (writer_ && !broken()) {
      std::lock_guard sequence(sequencer_);
      std::unique_lock state(state_mutex_);
      if (index_.tail_size() > 0) status = seal_index_locked();
      if (status && durable_turns_ > checkpoint_.turns) status = write_checkpoint_locked();
      if (status && head_records_since_snapshot_ > 0) status = write_snapshot_locked();
    }
    pack_.reset();
    log_.reset();
    heads_file_.reset();
    lock_.reset();
    return status;
  }

  // --- contexts ------------------------------------------------------------------

  /// A new context, empty or whose head is the existing turn `base` (a fork).
  /// Errors: not_found (no such turn), unsupported (reader), and write errors.
  result<context_head> create_context(turn_id base = 0) {
    AGENTCTX_TRY(check_writable());
    context_head head;
    if (base != 0) {
      auto t = get_turn(base);
      if (!t) return unexpected(std::move(t).error());
      head.head = base;
      head.depth = t->depth;
    }
    head.created_at_unix_ms = now();
    {
      std::unique_lock state(state_mutex_);
      do {
        head.id = random_();
      } while (head.id == 0 || context_locks_.count(head.id) != 0);
      context_locks_.emplace(head.id, std::make_unique<std::mutex>());
    }
    std::lock_guard context(context_lock(head.id));
    AGENTCTX_TRY(commit(head));
    return head;
  }

  /// A new context whose head is `from` (seed CTX_FORK): O(1), copies nothing.
  result<context_head> fork(turn_id from) {
    if (from == 0) return fail(errc::invalid_argument, "fork needs a turn to start from");
    return create_context(from);
  }

  /// Errors: not_found.
  result<context_head> head(context_id context) const {
    std::shared_lock state(state_mutex_);
    auto it = heads_.find(context);
    if (it == heads_.end()) return unexpected(no_context(context));
    return it->second;
  }

  /// Every context, by id.
  std::vector<context_head> contexts() const {
    std::shared_lock state(state_mutex_);
    std::vector<context_head> out;
    out.reserve(heads_.size());
    for (const auto& [id, h] : heads_) out.push_back(h);
    return out;
  }

  // --- appends -------------------------------------------------------------------

  /// Appends a turn holding `payload` to `context` (after its head, or after
  /// options.parent) and moves the head to it. Returns once durable.
  /// Errors: not_found (context or parent), invalid_argument (payload larger
  /// than max_payload_bytes, depth overflow), unsupported (reader), write errors
  /// (after which the store refuses writes until reopened).
  result<turn_id> append(context_id context, std::span<const std::byte> payload, const append_options& options = {}) {
    AGENTCTX_TRY(check_writable());
    if (payload.size() > options_.max_payload_bytes) {
      return fail(errc::invalid_argument, "payload of " + std::to_string(payload.size()) +
                                              " bytes is larger than the limit of " +
                                              std::to_string(options_.max_payload_bytes));
    }
    std::mutex* lock = find_context_lock(context);
    if (lock == nullptr) return unexpected(no_context(context));
    std::lock_guard context_guard(*lock);
    auto current = head(context);
    if (!current) return unexpected(std::move(current).error());
    turn t;
    t.parent = options.parent.value_or(current->head);
    if (t.parent != 0) {
      auto parent = get_turn(t.parent);
      if (!parent) return unexpected(std::move(parent).error());
      if (parent->depth == UINT32_MAX) return fail(errc::invalid_argument, "the parent is at the maximum depth");
      t.depth = parent->depth + 1;
    }
    t.codec = options.codec;
    t.type_tag = options.type_tag;
    t.flags = options.flags;
    t.created_at_unix_ms = now();
    t.payload_hash = sha256(payload);

    // Compress outside the sequencer; most appends of a known payload skip it.
    bool known = find_blob(t.payload_hash).has_value();
    std::vector<std::byte> record;
    if (!known) record = encode_blob(t.payload_hash, payload);

    {
      std::lock_guard sequence(sequencer_);
      AGENTCTX_TRY(check_writable());
      if (!known && !find_blob(t.payload_hash)) {
        auto appended = pack_->append(record);
        if (!appended) return unexpected(mark_broken(std::move(appended).error()));
        blob_record_header header;
        (void)decode_blob_header(record.data(), UINT32_MAX, header);
        std::unique_lock state(state_mutex_);
        index_.add(t.payload_hash, {pack_end_, header.raw_len, header.stored_len, header.codec});
        pack_end_ += record.size();
      }
      t.id = next_turn_++;
      std::byte bytes[turn_record_size];
      encode_turn_record(bytes, t);
      auto appended = log_->append(bytes);
      if (!appended) return unexpected(mark_broken(std::move(appended).error()));
      written_turns_.store(t.id, std::memory_order_release);
      remember(t);
    }
    context_head moved = *current;
    moved.head = t.id;
    moved.depth = t.depth;
    AGENTCTX_TRY(commit(moved));
    return t.id;
  }

  // --- reads ---------------------------------------------------------------------

  /// Errors: not_found (0, or not a durable turn; a reader knows the turns
  /// the writer had written when the view was loaded, which may include the
  /// batch being synced), checksum_mismatch / corrupt (damaged record), I/O.
  result<turn> get_turn(turn_id id) const {
    {
      std::shared_lock state(state_mutex_);
      if (id == 0 || id > durable_turns_) {
        return fail(errc::not_found, "turn " + std::to_string(id) + " does not exist");
      }
    }
    if (auto cached = recall(id)) return *cached;
    std::byte bytes[turn_record_size];
    std::uint64_t offset = turn_record_offset(id);
    auto n = log_->read_at(offset, bytes);
    if (!n) return unexpected(std::move(n).error());
    turn t;
    if (*n != turn_record_size) return fail(errc::truncated, "turn record cut short", log_->path(), offset);
    if (!decode_turn_record(bytes, t)) return fail(errc::checksum_mismatch, "turn record checksum mismatch", log_->path(), offset);
    if (t.id != id) return fail(errc::corrupt, "turn record holds id " + std::to_string(t.id), log_->path(), offset);
    remember(t);
    return t;
  }

  /// The last `n` turns of a context, oldest first (seed GET_LAST).
  result<turn_page> last(context_id context, std::size_t n) const {
    auto h = head(context);
    if (!h) return unexpected(std::move(h).error());
    return walk_back(*h, h->head, n);
  }

  /// The `n` turns before `cursor` on its ancestor chain, oldest first (seed
  /// GET_BEFORE; the cursor is next_cursor of the previous page). O(n).
  /// Turns are immutable, so the cursor alone defines the chain: a page stays
  /// the same even if the context's head moves on or is rewound meanwhile.
  /// Errors: not_found (context or turn).
  result<turn_page> before(context_id context, turn_id cursor, std::size_t n) const {
    auto h = head(context);
    if (!h) return unexpected(std::move(h).error());
    auto from = get_turn(cursor);
    if (!from) return unexpected(std::move(from).error());
    return walk_back(*h, from->parent, n);
  }

  /// Turns at depths [start, start + limit) on the context's chain, oldest
  /// first (seed 7.4). O(head depth - start).
  result<turn_page> range(context_id context, std::uint32_t start, std::size_t limit) const {
    auto h = head(context);
    if (!h) return unexpected(std::move(h).error());
    if (h->head == 0 || start > h->depth || limit == 0) return walk_back(*h, 0, 0);
    std::uint64_t end = std::min<std::uint64_t>(std::uint64_t{start} + limit, std::uint64_t{h->depth} + 1);
    turn_id at = h->head;
    for (std::uint64_t depth = h->depth; depth + 1 > end; --depth) {
      auto t = get_turn(at);
      if (!t) return unexpected(std::move(t).error());
      if (t->parent >= at) return fail(errc::corrupt, "turn " + std::to_string(at) + " names a later parent");
      at = t->parent;
    }
    return walk_back(*h, at, static_cast<std::size_t>(end - start));
  }

  /// The whole chain root .. `id`, oldest first (seed 7.1).
  result<std::vector<turn>> replay(turn_id id) const {
    std::vector<turn> chain;
    for (turn_id at = id; at != 0;) {
      auto t = get_turn(at);
      if (!t) return unexpected(std::move(t).error());
      if (t->parent >= at) return fail(errc::corrupt, "turn " + std::to_string(at) + " names a later parent");
      at = t->parent;
      chain.push_back(*t);
    }
    std::reverse(chain.begin(), chain.end());
    return chain;
  }

  /// The payload bytes with this hash, verified against it (seed GET_BLOB).
  /// Errors: not_found, corrupt / checksum_mismatch (damaged record), I/O.
  result<std::vector<std::byte>> get_blob(const blob_hash& hash) const {
    auto location = find_blob(hash);
    if (!location && !writer_) {
      AGENTCTX_TRY(const_cast<turn_store*>(this)->catch_up_pack());
      location = find_blob(hash);
    }
    if (!location) return fail(errc::not_found, "no blob " + to_hex(hash));
    if (auto cached = blob_cache_.find(hash)) return std::vector<std::byte>(*cached);
    auto bytes = read_blob(hash, *location);
    if (bytes) blob_cache_.insert(hash, std::make_shared<const std::vector<std::byte>>(*bytes));
    return bytes;
  }

  /// The payload of a turn.
  result<std::vector<std::byte>> read_payload(const turn& t) const { return get_blob(t.payload_hash); }

  /// Where a blob is stored, if it is.
  std::optional<blob_location> find_blob(const blob_hash& hash) const {
    std::shared_lock state(state_mutex_);
    return index_.find(hash);
  }

  /// Counts; scans turns.log (O(turns)).
  result<store_stats> stats() const;

  /// Reader: re-reads the store to see what the writer made durable since.
  result<void> refresh() {
    if (writer_) return {};
    return load_view();
  }

  const recovery_report& recovery() const noexcept { return recovery_; }
  bool is_writer() const noexcept { return writer_; }
  const std::string& directory() const noexcept { return dir_; }
  /// The highest durable TurnID.
  turn_id last_turn() const {
    std::shared_lock state(state_mutex_);
    return durable_turns_;
  }

 private:
  struct checkpoint_state {
    turn_id turns = 0;
    std::uint64_t pack_end = file_header_size;
    std::uint64_t heads_end = file_header_size;
  };

  turn_store(io::file_system& fs, std::string dir, store_options options)
      : fs_(fs), dir_(std::move(dir)), options_(std::move(options)), writer_(!options_.read_only),
        codecs_(options_.zstd_level), blob_cache_(options_.blob_cache_bytes) {
    random_ = options_.random ? options_.random : detail::default_random;
    clock_ = options_.clock ? options_.clock : now_unix_ms;
  }

  std::uint64_t now() const { return clock_(); }
  std::string path_of(std::string_view name) const { return io::join_path(dir_, name); }

  error no_context(context_id context) const {
    return make_error(errc::not_found, "context " + to_hex_id(context) + " does not exist");
  }

  // --- opening ---------------------------------------------------------------------

  result<void> open_files() {
    // Checked before locking, so that pointing a writer at the wrong folder
    // leaves no store.lock behind.
    auto heads_exists = fs_.exists(path_of(head_log_file_name));
    if (!heads_exists) {
      if (heads_exists.error().code == errc::not_found) return fail(errc::not_found, "no turn store here", dir_);
      return unexpected(std::move(heads_exists).error());
    }
    if (!*heads_exists) return fail(errc::not_found, "no turn store here (heads.log is missing)", dir_);
    if (writer_) {
      auto lock = io::acquire_writer_lock(fs_, path_of(lock_file_name), options_.wait_for_lock);
      if (!lock) return unexpected(std::move(lock).error());
      lock_ = std::move(*lock);
    }
    io::open_options mode = writer_ ? io::read_write : io::read_only;
    auto open_one = [&](std::string_view name, std::uint32_t magic, std::unique_ptr<io::file>& out,
                        bool first) -> result<void> {
      auto f = fs_.open(path_of(name), mode);
      if (!f) return unexpected(std::move(f).error());
      std::byte header[file_header_size];
      auto n = (*f)->read_at(0, header);
      if (!n) return unexpected(std::move(n).error());
      file_header decoded;
      auto problem = decode_file_header(std::span<const std::byte>(header, *n), magic, decoded);
      if (problem != header_problem::none) {
        return fail(problem == header_problem::bad_magic ? errc::bad_magic : errc::corrupt,
                    "not a turn store file (bad file header)", (*f)->path(), 0);
      }
      if (first) {
        salt_ = decoded.salt;
      } else if (decoded.salt != salt_) {
        return fail(errc::corrupt, "file belongs to another store (salt differs)", (*f)->path(), 8);
      }
      out = std::move(*f);
      return {};
    };
    AGENTCTX_TRY(open_one(head_log_file_name, head_log_magic, heads_file_, true));
    AGENTCTX_TRY(open_one(pack_file_name, pack_magic, pack_, false));
    AGENTCTX_TRY(open_one(turn_log_file_name, turn_log_magic, log_, false));
    return {};
  }

  /// Reads turns.idx; a missing or damaged checkpoint counts as none.
  checkpoint_state load_checkpoint() const {
    checkpoint_state none;
    auto mapped = fs_.map(path_of(turn_checkpoint_file_name));
    if (!mapped) return none;
    auto b = mapped->bytes();
    file_header header;
    if (b.size() != file_header_size + checkpoint_body_size) return none;
    if (decode_file_header(b, turn_checkpoint_magic, header) != header_problem::none || header.salt != salt_) {
      return none;
    }
    const std::byte* p = b.data() + file_header_size;
    if (load_u32(p + 24) != crc32(std::span<const std::byte>(p, 24))) return none;
    return {load_u64(p), load_u64(p + 8), load_u64(p + 16)};
  }

  /// Builds the in-memory view (index, turns, heads) from the files, recording
  /// in recovery_ what is damaged. Writes nothing.
  result<void> load_view() {
    recovery_report report;
    checkpoint_state checkpoint = options_.rebuild_derived ? checkpoint_state{} : load_checkpoint();

    // Heads are read first and the pack last, so that a reader racing the
    // writer finds every turn a head names and every blob a turn names.
    auto heads_size = heads_file_->size();
    if (!heads_size) return unexpected(std::move(heads_size).error());
    if (checkpoint.heads_end > *heads_size) {
      if (!options_.repair_damage) {
        return fail(errc::corrupt, "heads.log is shorter than its checkpointed durable part", heads_file_->path());
      }
      checkpoint.heads_end = file_header_size;
    }
    std::optional<snapshot> snap;
    if (!options_.rebuild_derived) snap = load_snapshot(*heads_size);
    auto log_size = log_->size();
    if (!log_size) return unexpected(std::move(log_size).error());
    auto pack_size = pack_->size();
    if (!pack_size) return unexpected(std::move(pack_size).error());

    // The blob index, caught up from the pack. A reader can race the writer
    // sealing a run (a newer manifest, runs merged away): it tries again.
    blob_index index;
    for (int attempt = 0; !options_.rebuild_derived; ++attempt) {
      report.index_problem.clear();
      auto loaded = blob_index::load(fs_, dir_, salt_, *pack_size, &report.index_problem);
      if (!loaded) return unexpected(std::move(loaded).error());
      index = std::move(*loaded);
      if (report.index_problem.empty() || writer_ || attempt == 3) break;
      pack_size = pack_->size();
      if (!pack_size) return unexpected(std::move(pack_size).error());
    }
    report.index_rebuilt = !report.index_problem.empty();
    std::uint64_t durable_pack = std::max(checkpoint.pack_end, index.covered_end());
    if (checkpoint.pack_end > *pack_size) {
      if (!options_.repair_damage) {
        return fail(errc::corrupt, "blobs.pack is shorter than its checkpointed durable part", pack_->path());
      }
      durable_pack = index.covered_end();
    }
    std::uint64_t pack_end = index.covered_end();
    AGENTCTX_TRY(scan_pack(index, pack_end, *pack_size, report));
    if (pack_end < durable_pack && !options_.repair_damage) {
      return fail(errc::corrupt, "damaged blob record inside the checkpointed durable part of the pack",
                  pack_->path(), pack_end);
    }
    report.pack_valid_end = pack_end;
    report.pack_cut_bytes = *pack_size - pack_end;

    // Turns: the checkpointed prefix is trusted; the rest is verified.
    std::uint64_t whole = (*log_size - std::min<std::uint64_t>(*log_size, file_header_size)) / turn_record_size;
    if (checkpoint.turns > whole) {
      if (!options_.repair_damage) {
        return fail(errc::corrupt, "turns.log holds " + std::to_string(whole) + " turns but " +
                                       std::to_string(checkpoint.turns) + " were checkpointed as durable",
                    log_->path());
      }
      checkpoint.turns = 0;
    }
    turn_id valid = checkpoint.turns;
    std::unordered_map<turn_id, std::uint32_t> tail_depths;  // depths of verified tail turns
    {
      constexpr std::uint64_t batch = 4096;
      std::vector<std::byte> buffer(static_cast<std::size_t>(std::min<std::uint64_t>(batch, whole - valid)) *
                                    turn_record_size);
      bool stop = false;
      for (turn_id next = valid + 1; next <= whole && !stop;) {
        std::uint64_t count = std::min<std::uint64_t>(batch, whole - next + 1);
        std::span<std::byte> chunk(buffer.data(), count * turn_record_size);
        AGENTCTX_TRY(detail::read_exact(*log_, turn_record_offset(next), chunk));
        for (std::uint64_t i = 0; i < count; ++i, ++next) {
          turn t;
          std::string problem;
          if (!decode_turn_record(chunk.data() + i * turn_record_size, t)) {
            problem = "turn record checksum mismatch";
          } else if (t.id != next) {
            problem = "turn record holds id " + std::to_string(t.id);
          } else if (t.parent >= t.id) {
            problem = "turn names a parent that is not earlier";
          } else if (!index.find(t.payload_hash)) {
            problem = "turn's payload blob is not in the pack";
          } else {
            std::optional<std::uint32_t> parent_depth;
            if (t.parent == 0) {
              parent_depth = UINT32_MAX;  // root: depth must be 0
            } else if (auto it = tail_depths.find(t.parent); it != tail_depths.end()) {
              parent_depth = it->second;
            } else {
              auto p = read_turn_unchecked(t.parent);
              if (p) parent_depth = p->depth;
            }
            std::uint32_t expected = t.parent == 0 ? 0 : (parent_depth ? *parent_depth + 1 : 0);
            if (!parent_depth || t.depth != expected) problem = "turn depth is not its parent's plus one";
          }
          if (!problem.empty()) {
            if (report.first_problem.empty()) {
              report.first_problem = log_->path() + ": at byte " + std::to_string(turn_record_offset(next)) + ": " + problem;
            }
            stop = true;
            break;
          }
          tail_depths.emplace(t.id, t.depth);
          valid = t.id;
        }
      }
    }
    report.turns = valid;
    report.turns_dropped = whole - valid;
    report.log_cut_bytes = *log_size - std::min(*log_size, turn_record_offset(valid + 1));

    // Heads: the snapshot (when it agrees with the log), then the log after it.
    std::map<context_id, context_head> heads;
    std::uint64_t offset = file_header_size;
    std::uint64_t seq = 0;
    std::uint64_t snapshot_seq = 0;
    if (snap) {
      heads = std::move(snap->heads);
      offset = snap->log_offset;
      seq = snap->seq;
      snapshot_seq = seq;
      report.snapshot_used = true;
      for (const auto& [id, h] : heads) {
        if (!head_is_valid(h, valid, checkpoint.turns, tail_depths)) {
          // The snapshot names a turn that did not survive: replay everything.
          heads.clear();
          offset = file_header_size;
          seq = 0;
          snapshot_seq = 0;
          report.snapshot_used = false;
          break;
        }
      }
    }
    // Only the records after the snapshot are read.
    std::vector<std::byte> head_log(*heads_size - std::min(*heads_size, offset));
    AGENTCTX_TRY(detail::read_exact(*heads_file_, offset, head_log));
    std::vector<context_head> corrections;
    std::uint64_t replayed = 0;
    for (std::size_t at = 0; at + head_record_size <= head_log.size(); at += head_record_size) {
      std::uint64_t record_seq;
      context_head h;
      if (!decode_head_record(head_log.data() + at, record_seq, h) || record_seq != seq + 1) break;
      seq = record_seq;
      offset += head_record_size;
      ++replayed;
      if (!head_is_valid(h, valid, checkpoint.turns, tail_depths)) {
        ++report.head_records_dropped;
        auto it = heads.find(h.id);
        context_head fallback = it != heads.end() ? it->second : context_head{h.id, 0, 0, h.flags, h.created_at_unix_ms};
        heads[h.id] = fallback;
        corrections.push_back(fallback);
        continue;
      }
      heads[h.id] = h;
    }
    if (offset < checkpoint.heads_end && !options_.repair_damage) {
      return fail(errc::corrupt, "damaged head record inside the checkpointed durable part of heads.log",
                  heads_file_->path(), offset);
    }
    report.head_records = replayed;
    report.head_log_cut_bytes = *heads_size - offset;

    std::unique_lock state(state_mutex_);
    index_ = std::move(index);
    pack_end_ = pack_end;
    pack_synced_end_ = pack_end;
    durable_turns_ = valid;
    next_turn_ = valid + 1;
    written_turns_.store(valid);
    synced_turns_ = valid;
    heads_ = std::move(heads);
    context_locks_.clear();
    for (const auto& [id, h] : heads_) context_locks_.emplace(id, std::make_unique<std::mutex>());
    head_seq_ = seq;
    head_log_end_ = offset;
    head_records_since_snapshot_ = seq - snapshot_seq;
    pending_corrections_ = std::move(corrections);
    checkpoint_ = checkpoint;
    if (checkpoint_.turns > valid) checkpoint_.turns = valid;
    recovery_ = report;
    {
      std::lock_guard guard(cache_mutex_);
      cache_.clear();
    }
    return {};
  }

  bool head_is_valid(const context_head& h, turn_id valid, turn_id checkpointed,
                     const std::unordered_map<turn_id, std::uint32_t>& tail_depths) const {
    if (h.head == 0) return h.depth == 0;
    if (h.head > valid) return false;
    if (h.head > checkpointed) {
      auto it = tail_depths.find(h.head);
      return it != tail_depths.end() && it->second == h.depth;
    }
    return true;  // inside the checkpointed prefix: trusted without I/O
  }

  struct snapshot {
    std::map<context_id, context_head> heads;
    std::uint64_t seq = 0;
    std::uint64_t log_offset = 0;
  };

  /// heads.snap after the file header: seq u64, log_offset u64, count u64,
  /// count x 32-byte heads, crc32 of all after the header. It is used only
  /// when the head record just before log_offset carries seq.
  std::optional<snapshot> load_snapshot(std::uint64_t head_log_size) const {
    auto mapped = fs_.map(path_of(head_snapshot_file_name));
    if (!mapped) return std::nullopt;
    auto b = mapped->bytes();
    file_header header;
    if (b.size() < file_header_size + 28) return std::nullopt;
    if (decode_file_header(b, head_snapshot_magic, header) != header_problem::none || header.salt != salt_) {
      return std::nullopt;
    }
    const std::byte* p = b.data() + file_header_size;
    snapshot s;
    s.seq = load_u64(p);
    s.log_offset = load_u64(p + 8);
    std::uint64_t count = load_u64(p + 16);
    if (count > b.size() / head_entry_size) return std::nullopt;
    if (b.size() != file_header_size + 24 + count * head_entry_size + 4) return std::nullopt;
    if (load_u32(b.data() + b.size() - 4) != crc32(b.subspan(file_header_size, b.size() - file_header_size - 4))) {
      return std::nullopt;
    }
    if (s.seq == 0 || s.log_offset < file_header_size + head_record_size || s.log_offset > head_log_size ||
        (s.log_offset - file_header_size) % head_record_size != 0) {
      return std::nullopt;
    }
    std::uint64_t seq;
    context_head last;
    std::byte record[head_record_size];
    auto n = heads_file_->read_at(s.log_offset - head_record_size, record);
    if (!n || *n != head_record_size || !decode_head_record(record, seq, last) || seq != s.seq) {
      return std::nullopt;
    }
    for (std::uint64_t i = 0; i < count; ++i) {
      context_head h = decode_head_entry(p + 24 + i * head_entry_size);
      if (h.id == 0 || !s.heads.emplace(h.id, h).second) return std::nullopt;
    }
    return s;
  }

  /// Scans pack records from `end` up to `size`, adding them to `index`;
  /// stops at the first record that is torn or damaged.
  result<void> scan_pack(blob_index& index, std::uint64_t& end, std::uint64_t size, recovery_report& report) const {
    std::vector<std::byte> record;
    std::string problem;
    while (end < size) {
      blob_record_header header;
      AGENTCTX_TRY(detail::read_pack_record(*pack_, end, size, header, record, problem));
      if (!problem.empty()) {
        if (report.first_problem.empty()) {
          report.first_problem = pack_->path() + ": at byte " + std::to_string(end) + ": " + problem;
        }
        return {};
      }
      if (!index.find(header.hash)) index.add(header.hash, {end, header.raw_len, header.stored_len, header.codec});
      ++report.blobs_indexed_from_pack;
      end += header.record_size();
    }
    return {};
  }

  /// Reader: indexes pack records appended since the view was loaded.
  result<void> catch_up_pack() {
    auto size = pack_->size();
    if (!size) return unexpected(std::move(size).error());
    std::unique_lock state(state_mutex_);
    recovery_report ignored;
    return scan_pack(index_, pack_end_, *size, ignored);
  }

  /// Writer: makes the files agree with the view load_view() built.
  result<void> apply_recovery() {
    recovery_report& r = recovery_;
    if (r.pack_cut_bytes > 0) {
      AGENTCTX_TRY(pack_->truncate(r.pack_valid_end));
      AGENTCTX_TRY(pack_->sync());
    }
    if (r.log_cut_bytes > 0) {
      AGENTCTX_TRY(log_->truncate(turn_record_offset(r.turns + 1)));
      AGENTCTX_TRY(log_->sync());
    }
    if (r.head_log_cut_bytes > 0) {
      AGENTCTX_TRY(heads_file_->truncate(head_log_end_));
      AGENTCTX_TRY(heads_file_->sync());
    }
    if (!pending_corrections_.empty()) {
      // Records naming lost turns are overridden, so that they can never
      // come back to life when their TurnIDs are assigned again.
      std::vector<std::byte> bytes(pending_corrections_.size() * head_record_size);
      for (std::size_t i = 0; i < pending_corrections_.size(); ++i) {
        encode_head_record(bytes.data() + i * head_record_size, ++head_seq_, pending_corrections_[i]);
      }
      AGENTCTX_TRY(heads_file_->append(bytes));
      AGENTCTX_TRY(heads_file_->sync());
      head_log_end_ += bytes.size();
      head_records_since_snapshot_ += pending_corrections_.size();
      pending_corrections_.clear();
      // A snapshot past the corrections, so that a crash before close() does
      // not make the next open drop (and correct) the same records again.
      std::unique_lock state(state_mutex_);
      AGENTCTX_TRY(write_snapshot_locked());
    }
    // What a crashed writer left may be written but not synced: make it
    // durable before anything (a checkpoint, a head record of a fork) vouches
    // for it. The folder too: a writer killed at the end of init leaves
    // heads.log renamed into place but its name not yet durable.
    AGENTCTX_TRY(pack_->sync());
    AGENTCTX_TRY(log_->sync());
    AGENTCTX_TRY(heads_file_->sync());
    AGENTCTX_TRY(fs_.sync_dir(dir_));
    std::lock_guard sequence(sequencer_);
    std::unique_lock state(state_mutex_);
    if (r.index_rebuilt || options_.rebuild_derived || index_.tail_size() >= options_.seal_threshold) {
      AGENTCTX_TRY(seal_index_locked());
    }
    if (options_.rebuild_derived) AGENTCTX_TRY(write_snapshot_locked());
    // The checkpoint must never claim more than survived (after a repair cut
    // into it) and should cover what was just verified.
    if (!r.clean() || options_.rebuild_derived || durable_turns_ != checkpoint_.turns ||
        pack_end_ != checkpoint_.pack_end || head_log_end_ != checkpoint_.heads_end) {
      AGENTCTX_TRY(write_checkpoint_locked());
    }
    AGENTCTX_TRY(index_.remove_unlisted_runs(fs_, dir_));
    r.applied = true;
    return {};
  }

  // --- writing ---------------------------------------------------------------------

  result<void> check_writable() const {
    if (!writer_) return fail(errc::unsupported, "the store is open read-only", dir_);
    if (closed_) return fail(errc::invalid_argument, "the store is closed", dir_);
    std::lock_guard guard(commit_mutex_);
    if (broken_) {
      return fail(broken_->code, "the store refuses writes until it is reopened, after: " + broken_->describe(), dir_);
    }
    return {};
  }

  bool broken() const {
    std::lock_guard guard(commit_mutex_);
    return broken_.has_value();
  }

  error mark_broken(error e) {
    std::lock_guard guard(commit_mutex_);
    if (!broken_) broken_ = e;
    commit_done_.notify_all();
    return e;
  }

  std::vector<std::byte> encode_blob(const blob_hash& hash, std::span<const std::byte> payload) {
    blob_record_header header;
    header.hash = hash;
    header.raw_len = static_cast<std::uint32_t>(payload.size());
    std::vector<std::byte> packed;
    bool compressed = false;
    if (!payload.empty()) {
      auto codec = codecs_.borrow();
      auto n = codec->compress(payload, packed);
      compressed = n && *n < payload.size();
    }
    std::span<const std::byte> stored = compressed ? std::span<const std::byte>(packed) : payload;
    header.codec = static_cast<std::uint16_t>(compressed ? blob_codec::zstd : blob_codec::raw);
    header.stored_len = static_cast<std::uint32_t>(stored.size());
    std::vector<std::byte> record(header.record_size());
    encode_blob_header(record.data(), header);
    if (!stored.empty()) std::memcpy(record.data() + blob_header_size, stored.data(), stored.size());
    std::uint32_t crc = crc32(std::span<const std::byte>(record.data(), blob_header_size + stored.size()));
    store_u32(record.data() + blob_header_size + stored.size(), crc);
    return record;
  }

  /// Queues `head` (if any) and returns once every write made before the
  /// call, and the head record, are durable. One waiting thread (the
  /// leader) syncs for all: pack, then turn log, then the head records of the
  /// batch in one append and one sync, then publishes.
  result<void> commit(std::optional<context_head> head) {
    std::unique_lock guard(commit_mutex_);
    std::uint64_t ticket = ++next_ticket_;
    if (head) queue_.push_back(*head);
    while (done_ticket_ < ticket) {
      if (broken_) return fail(broken_->code, "write failed: " + broken_->describe(), dir_);
      if (leading_) {
        commit_done_.wait(guard);
        continue;
      }
      leading_ = true;
      std::vector<context_head> batch = std::move(queue_);
      queue_.clear();
      std::uint64_t target = next_ticket_;
      guard.unlock();
      bool maintain = false;
      auto flushed = flush_batch(batch, maintain);
      guard.lock();
      if (!flushed) {
        if (!broken_) broken_ = flushed.error();
      } else {
        done_ticket_ = target;
      }
      if (flushed && maintain) {
        // The batch is durable and its appenders go on; the next leader
        // waits until the derived files are written.
        commit_done_.notify_all();
        guard.unlock();
        maintain_derived_files();
        guard.lock();
      }
      leading_ = false;
      commit_done_.notify_all();
    }
    return {};
  }

  /// Makes the batch durable and publishes it; sets `maintain` when a
  /// derived file is due (maintain_derived_files()).
  result<void> flush_batch(const std::vector<context_head>& batch, bool& maintain) {
    turn_id written = written_turns_.load(std::memory_order_acquire);
    std::uint64_t pack_written;
    {
      std::shared_lock state(state_mutex_);
      pack_written = pack_end_;
    }
    // The pack and the log are synced at the same time; the head records are
    // written only after both, so no head ever names a turn that is not durable.
    bool pack_dirty = pack_written > pack_synced_end_;
    bool log_dirty = written > synced_turns_;
    if (pack_dirty && log_dirty) {
      AGENTCTX_TRY(sync_worker_.sync_both(*pack_, *log_));
    } else if (pack_dirty) {
      AGENTCTX_TRY(pack_->sync());
    } else if (log_dirty) {
      AGENTCTX_TRY(log_->sync());
    }
    pack_synced_end_ = std::max(pack_synced_end_, pack_written);
    synced_turns_ = std::max(synced_turns_, written);
    if (!batch.empty()) {
      std::vector<std::byte> bytes(batch.size() * head_record_size);
      std::uint64_t seq = head_seq_;
      for (std::size_t i = 0; i < batch.size(); ++i) {
        encode_head_record(bytes.data() + i * head_record_size, ++seq, batch[i]);
      }
      AGENTCTX_TRY(heads_file_->append(bytes));
      AGENTCTX_TRY(heads_file_->sync());
      head_seq_ = seq;
      head_log_end_ += bytes.size();
      head_records_since_snapshot_ += batch.size();
    }
    std::unique_lock state(state_mutex_);
    durable_turns_ = std::max(durable_turns_, written);
    for (const auto& h : batch) heads_[h.id] = h;
    maintain = index_.tail_size() >= options_.seal_threshold ||
               durable_turns_ - checkpoint_.turns >= options_.checkpoint_interval ||
               head_records_since_snapshot_ >= std::max<std::uint64_t>(options_.snapshot_threshold, 2 * heads_.size());
    return {};
  }

  /// Run by the commit leader after publishing a batch. A failure leaves the
  /// old derived files, which stay correct, and is retried at the next
  /// threshold or at close(): the batch is durable either way.
  void maintain_derived_files() {
    std::lock_guard sequence(sequencer_);
    std::unique_lock state(state_mutex_);
    bool seal = index_.tail_size() >= options_.seal_threshold;
    if (seal) (void)seal_index_locked();
    if (seal || durable_turns_ - checkpoint_.turns >= options_.checkpoint_interval) (void)write_checkpoint_locked();
    if (head_records_since_snapshot_ >= std::max<std::uint64_t>(options_.snapshot_threshold, 2 * heads_.size())) {
      (void)write_snapshot_locked();
    }
  }

  /// Holding the sequencer and the state lock: syncs the pack, seals the tail.
  result<void> seal_index_locked() {
    if (pack_end_ > pack_synced_end_) {
      AGENTCTX_TRY(pack_->sync());
      pack_synced_end_ = pack_end_;
    }
    return index_.seal(fs_, dir_, salt_, pack_end_);
  }

  /// turns.idx after the file header: turns u64, pack_end u64, heads_end u64,
  /// crc32 of the three. Covers only what is durable.
  static constexpr std::size_t checkpoint_body_size = 28;
  result<void> write_checkpoint_locked() {
    checkpoint_state c{durable_turns_, std::min(pack_synced_end_, pack_end_), head_log_end_};
    std::byte bytes[file_header_size + checkpoint_body_size];
    encode_file_header(bytes, {turn_checkpoint_magic, salt_});
    store_u64(bytes + file_header_size, c.turns);
    store_u64(bytes + file_header_size + 8, c.pack_end);
    store_u64(bytes + file_header_size + 16, c.heads_end);
    store_u32(bytes + file_header_size + 24, crc32(std::span<const std::byte>(bytes + file_header_size, 24)));
    AGENTCTX_TRY(io::write_file_atomically(fs_, path_of(turn_checkpoint_file_name), bytes));
    checkpoint_ = c;
    return {};
  }

  /// Holding the state lock, with no head record in flight: writes heads.snap.
  result<void> write_snapshot_locked() {
    std::vector<std::byte> bytes(file_header_size + 24 + heads_.size() * head_entry_size + 4);
    encode_file_header(bytes.data(), {head_snapshot_magic, salt_});
    std::byte* p = bytes.data() + file_header_size;
    store_u64(p, head_seq_);
    store_u64(p + 8, head_log_end_);
    store_u64(p + 16, heads_.size());
    std::size_t i = 0;
    for (const auto& [id, h] : heads_) encode_head_entry(p + 24 + (i++) * head_entry_size, h);
    store_u32(bytes.data() + bytes.size() - 4,
              crc32(std::span<const std::byte>(bytes).subspan(file_header_size, bytes.size() - file_header_size - 4)));
    if (head_seq_ == 0) return {};
    AGENTCTX_TRY(io::write_file_atomically(fs_, path_of(head_snapshot_file_name), bytes));
    head_records_since_snapshot_ = 0;
    return {};
  }

  // --- reading helpers ---------------------------------------------------------------

  /// A record inside the valid log, read without the durability check (recovery).
  std::optional<turn> read_turn_unchecked(turn_id id) const {
    std::byte bytes[turn_record_size];
    auto n = log_->read_at(turn_record_offset(id), bytes);
    turn t;
    if (!n || *n != turn_record_size || !decode_turn_record(bytes, t) || t.id != id) return std::nullopt;
    return t;
  }

  result<std::vector<std::byte>> read_blob(const blob_hash& hash, const blob_location& location) const {
    blob_record_header header;
    std::vector<std::byte> record;
    std::string problem;
    AGENTCTX_TRY(detail::read_pack_record(*pack_, location.offset, location.offset + location.record_size(), header,
                                          record, problem, true));
    auto bad = [&](errc code, const std::string& what) {
      return fail(code, "blob " + to_hex(hash) + ": " + what, pack_->path(), location.offset);
    };
    if (!problem.empty()) return bad(errc::corrupt, problem);
    if (header.hash != hash || header.stored_len != location.stored_len || header.raw_len != location.raw_len ||
        header.codec != location.codec) {
      return bad(errc::corrupt, "record header does not match the index");
    }
    auto raw = detail::decode_payload(header, record, codecs_);
    if (!raw) return bad(errc::corrupt, raw.error().message);
    return raw;
  }

  result<turn_page> walk_back(const context_head& h, turn_id from, std::size_t n) const {
    turn_page page;
    page.head = h.head;
    page.head_depth = h.depth;
    turn_id at = from;
    while (at != 0 && page.turns.size() < n) {
      auto t = get_turn(at);
      if (!t) return unexpected(std::move(t).error());
      if (t->parent >= at) return fail(errc::corrupt, "turn " + std::to_string(at) + " names a later parent");
      page.turns.push_back(*t);
      at = t->parent;
    }
    page.next_cursor = page.turns.empty() || page.turns.back().parent == 0 ? 0 : page.turns.back().id;
    std::reverse(page.turns.begin(), page.turns.end());
    return page;
  }

  std::mutex* find_context_lock(context_id context) {
    std::shared_lock state(state_mutex_);
    auto it = context_locks_.find(context);
    return it == context_locks_.end() ? nullptr : it->second.get();
  }
  std::mutex& context_lock(context_id context) { return *find_context_lock(context); }

  // A small direct-mapped cache of recent turn records: appends and walks
  // touch the same few turns again and again.
  struct cache_slot {
    turn_id id = 0;
    turn value;
  };
  static constexpr std::size_t cache_slots = 1024;
  void remember(const turn& t) const {
    std::lock_guard guard(cache_mutex_);
    if (cache_.empty()) cache_.resize(cache_slots);  // lazily: opening a store stays cheap
    cache_[t.id % cache_slots] = {t.id, t};
  }
  std::optional<turn> recall(turn_id id) const {
    std::lock_guard guard(cache_mutex_);
    if (cache_.empty()) return std::nullopt;
    const cache_slot& slot = cache_[id % cache_slots];
    if (slot.id == id) return slot.value;
    return std::nullopt;
  }

  io::file_system& fs_;
  std::string dir_;
  store_options options_;
  bool writer_;
  bool closed_ = false;
  std::function<std::uint64_t()> random_;
  std::function<std::uint64_t()> clock_;
  std::unique_ptr<io::file_lock> lock_;
  std::unique_ptr<io::file> pack_;
  std::unique_ptr<io::file> log_;
  std::unique_ptr<io::file> heads_file_;
  store_salt salt_{};
  recovery_report recovery_;
  mutable zstd_codec_pool codecs_;
  mutable detail::blob_cache blob_cache_;

  // Guarded by state_mutex_: what readers see.
  mutable std::shared_mutex state_mutex_;
  blob_index index_;
  std::uint64_t pack_end_ = file_header_size;  // end of the last written blob record
  turn_id durable_turns_ = 0;
  std::map<context_id, context_head> heads_;
  std::unordered_map<context_id, std::unique_ptr<std::mutex>> context_locks_;
  checkpoint_state checkpoint_;

  // Guarded by sequencer_: id assignment and appends to the pack and the log.
  std::mutex sequencer_;
  turn_id next_turn_ = 1;
  std::atomic<turn_id> written_turns_{0};

  // Group commit, guarded by commit_mutex_; the leader alone touches the
  // synced positions and the head log.
  mutable std::mutex commit_mutex_;
  std::condition_variable commit_done_;
  std::vector<context_head> queue_;
  std::uint64_t next_ticket_ = 0;
  std::uint64_t done_ticket_ = 0;
  bool leading_ = false;
  std::optional<error> broken_;
  std::uint64_t pack_synced_end_ = file_header_size;
  turn_id synced_turns_ = 0;
  std::uint64_t head_seq_ = 0;
  std::uint64_t head_log_end_ = file_header_size;
  std::uint64_t head_records_since_snapshot_ = 0;
  std::vector<context_head> pending_corrections_;
  detail::sync_worker sync_worker_;

  mutable std::mutex cache_mutex_;
  mutable std::vector<cache_slot> cache_;
};

inline result<store_stats> turn_store::stats() const {
  store_stats s;
  turn_id turns = last_turn();
  s.turns = turns;
  {
    std::shared_lock state(state_mutex_);
    s.contexts = heads_.size();
    s.blobs = index_.size();
    s.index_runs = index_.run_count();
    s.index_tail = index_.tail_size();
  }
  std::unordered_map<blob_hash, std::uint32_t, blob_hash_hasher> raw_by_hash;
  constexpr std::uint64_t batch = 4096;
  std::vector<std::byte> buffer(static_cast<std::size_t>(std::min<std::uint64_t>(batch, turns)) * turn_record_size);
  for (turn_id next = 1; next <= turns;) {
    std::uint64_t count = std::min<std::uint64_t>(batch, turns - next + 1);
    std::span<std::byte> chunk(buffer.data(), count * turn_record_size);
    AGENTCTX_TRY(detail::read_exact(*log_, turn_record_offset(next), chunk));
    for (std::uint64_t i = 0; i < count; ++i, ++next) {
      turn t;
      if (!decode_turn_record(chunk.data() + i * turn_record_size, t)) {
        return fail(errc::checksum_mismatch, "turn record checksum mismatch", log_->path(), turn_record_offset(next));
      }
      auto it = raw_by_hash.find(t.payload_hash);
      if (it == raw_by_hash.end()) {
        auto location = find_blob(t.payload_hash);
        if (!location) return fail(errc::not_found, "turn " + std::to_string(t.id) + " names a missing blob");
        it = raw_by_hash.emplace(t.payload_hash, location->raw_len).first;
        s.blob_raw_bytes += location->raw_len;
        s.blob_stored_bytes += location->stored_len;
      }
      s.payload_bytes += it->second;
    }
  }
  // Blobs no turn names (left by an append that did not complete) count too.
  s.blobs = std::max<std::uint64_t>(s.blobs, raw_by_hash.size());
  auto pack = pack_->size();
  auto log = log_->size();
  auto heads = heads_file_->size();
  if (!pack || !log || !heads) return fail(errc::io_error, "cannot read the store's file sizes", dir_);
  s.pack_bytes = *pack;
  s.turn_log_bytes = *log;
  s.head_log_bytes = *heads;
  return s;
}

}  // namespace agentctx::turns
