// agentctx/io/detail/memory_file_system-inl.hpp: definitions for
// memory_file_system.hpp (included at its end; do not include directly).
#pragma once

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <utility>

#include "agentctx/io/detail/file_system_errors.hpp"
#include "agentctx/io/memory_file_system.hpp"

namespace agentctx::io {

namespace detail {

using byte_buffer = std::vector<std::byte>;

struct memory_operation {
  unsynced_operation::kind type = unsynced_operation::kind::write;
  std::uint64_t offset = 0;                 // write: first byte; truncate: new length
  std::shared_ptr<const byte_buffer> data;  // write only
};

using memory_entries = std::map<std::string, std::shared_ptr<memory_node>>;

// One inode: a file or a directory. Byte buffers are shared copy-on-write
// with snapshots and mappings (see writable()).
struct memory_node {
  bool directory = false;
  // Files.
  std::shared_ptr<byte_buffer> durable;
  std::shared_ptr<byte_buffer> current;
  std::vector<memory_operation> pending;
  std::size_t shared_locks = 0;
  bool exclusive_lock = false;
  // Directories.
  memory_entries entries;
  memory_entries durable_entries;
};

inline std::shared_ptr<memory_node> make_file_node() {
  auto node = std::make_shared<memory_node>();
  node->durable = std::make_shared<byte_buffer>();
  node->current = std::make_shared<byte_buffer>();
  return node;
}

inline std::shared_ptr<memory_node> make_directory_node() {
  auto node = std::make_shared<memory_node>();
  node->directory = true;
  return node;
}

struct memory_core {
  explicit memory_core(memory_file_system_options options)
      : max_file_size(std::min<std::uint64_t>(options.max_file_size, byte_buffer().max_size())),
        root(make_directory_node()) {}

  std::mutex mutex;
  std::condition_variable lock_released;
  std::uint64_t max_file_size;
  std::shared_ptr<memory_node> root;
  // Bumped by simulate_crash() and restore(); handles and locks of an older
  // epoch belong to the "dead" process and are refused.
  std::uint64_t epoch = 0;
  // lock() calls blocked in lock_released.wait.
  std::size_t lock_waiters = 0;
};

// Nobody else holds the buffer while the core mutex is held and the count is
// 1, so it may be changed in place; otherwise it is copied first.
inline byte_buffer& writable(std::shared_ptr<byte_buffer>& buffer) {
  if (buffer.use_count() > 1) buffer = std::make_shared<byte_buffer>(*buffer);
  return *buffer;
}

/// Applies `operation`; a write keeps only its first `write_limit` bytes.
inline void apply_operation(byte_buffer& bytes, const memory_operation& operation,
                  std::size_t write_limit = std::numeric_limits<std::size_t>::max()) {
  auto offset = static_cast<std::size_t>(operation.offset);  // bounded by max_file_size when recorded
  if (operation.type == unsynced_operation::kind::truncate) {
    bytes.resize(offset);
    return;
  }
  std::size_t count = std::min(operation.data->size(), write_limit);
  if (count == 0) return;
  if (bytes.size() < offset + count) bytes.resize(offset + count);
  std::memcpy(bytes.data() + offset, operation.data->data(), count);
}

inline std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = std::min(path.find('/', start), path.size());
    std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.emplace_back(part);
    }
    start = end + 1;
  }
  return parts;
}

// Walks the first `depth` components through `table` (current or durable
// entries). Returns null and sets `error` to ENOENT or ENOTDIR on failure.
inline std::shared_ptr<memory_node> find_node(const std::shared_ptr<memory_node>& root,
                                              const std::vector<std::string>& parts, std::size_t depth,
                                              memory_entries memory_node::*table, int& error) {
  std::shared_ptr<memory_node> node = root;
  for (std::size_t i = 0; i < depth; ++i) {
    if (!node->directory) {
      error = ENOTDIR;
      return nullptr;
    }
    const memory_entries& entries = (*node).*table;
    auto it = entries.find(parts[i]);
    if (it == entries.end()) {
      error = ENOENT;
      return nullptr;
    }
    node = it->second;
  }
  return node;
}

inline result<std::shared_ptr<memory_node>> resolve(const memory_core& core, const std::vector<std::string>& parts,
                                                    const char* operation, const std::string& path) {
  int error = 0;
  auto node = find_node(core.root, parts, parts.size(), &memory_node::entries, error);
  if (!node) return system_failure(operation, error, path);
  return node;
}

inline result<std::shared_ptr<memory_node>> resolve_file(const memory_core& core,
                                                         const std::vector<std::string>& parts,
                                                         const char* operation, const std::string& path) {
  auto node = resolve(core, parts, operation, path);
  if (node && (*node)->directory) return system_failure(operation, EISDIR, path);
  return node;
}

inline result<std::shared_ptr<memory_node>> resolve_directory(const memory_core& core,
                                                              const std::vector<std::string>& parts,
                                                              const char* operation, const std::string& path) {
  auto node = resolve(core, parts, operation, path);
  if (node && !(*node)->directory) return system_failure(operation, ENOTDIR, path);
  return node;
}

/// The directory that holds the last component; the root has none (EISDIR).
inline result<std::shared_ptr<memory_node>> resolve_parent(const memory_core& core,
                                                           const std::vector<std::string>& parts,
                                                           const char* operation, const std::string& path) {
  if (parts.empty()) return system_failure(operation, EISDIR, path);
  int error = 0;
  auto node = find_node(core.root, parts, parts.size() - 1, &memory_node::entries, error);
  if (!node) return system_failure(operation, error, path);
  if (!node->directory) return system_failure(operation, ENOTDIR, path);
  return node;
}

inline result<void> record_write(memory_node& node, std::uint64_t offset, std::span<const std::byte> data,
                                  std::uint64_t max_file_size, const std::string& path) {
  if (data.empty()) return {};
  if (offset > max_file_size || data.size() > max_file_size - offset) return system_failure("write", EFBIG, path);
  memory_operation operation{unsynced_operation::kind::write, offset,
                             std::make_shared<const byte_buffer>(data.begin(), data.end())};
  apply_operation(writable(node.current), operation);
  node.pending.push_back(std::move(operation));
  return {};
}

inline result<void> record_truncate(memory_node& node, std::uint64_t length, std::uint64_t max_file_size,
                                    const std::string& path) {
  if (length > max_file_size) return system_failure("truncate", EFBIG, path);
  memory_operation operation{unsynced_operation::kind::truncate, length, nullptr};
  apply_operation(writable(node.current), operation);
  node.pending.push_back(std::move(operation));
  return {};
}

inline void sync_node(memory_node& node) {
  if (node.pending.empty()) return;
  byte_buffer& durable = writable(node.durable);
  for (const auto& operation : node.pending) apply_operation(durable, operation);
  node.pending.clear();
}

inline error invalidated_handle_error(const char* operation, const std::string& path) {
  error e = system_error(operation, EIO, path);
  e.message += " (handle invalidated by a simulated crash)";
  return e;
}

class memory_file final : public file {
 public:
  memory_file(std::shared_ptr<memory_core> core, std::shared_ptr<memory_node> node, std::string path, bool writable,
              std::uint64_t epoch)
      : core_(std::move(core)), node_(std::move(node)), path_(std::move(path)), epoch_(epoch), writable_(writable) {}

  result<std::size_t> read_at(std::uint64_t offset, std::span<std::byte> out) override {
    std::lock_guard guard(core_->mutex);
    AGENTCTX_TRY(check("read", false));
    const byte_buffer& bytes = *node_->current;
    if (offset >= bytes.size()) return std::size_t{0};
    auto start = static_cast<std::size_t>(offset);
    std::size_t count = std::min(out.size(), bytes.size() - start);
    if (count != 0) std::memcpy(out.data(), bytes.data() + start, count);
    return count;
  }

  result<void> append(std::span<const std::byte> data) override {
    std::lock_guard guard(core_->mutex);
    AGENTCTX_TRY(check("write", true));
    return record_write(*node_, node_->current->size(), data, core_->max_file_size, path_);
  }

  result<void> write_at(std::uint64_t offset, std::span<const std::byte> data) override {
    std::lock_guard guard(core_->mutex);
    AGENTCTX_TRY(check("write", true));
    return record_write(*node_, offset, data, core_->max_file_size, path_);
  }

  result<void> sync() override {
    std::lock_guard guard(core_->mutex);
    AGENTCTX_TRY(check("sync", false));
    sync_node(*node_);
    return {};
  }

  result<void> truncate(std::uint64_t length) override {
    std::lock_guard guard(core_->mutex);
    AGENTCTX_TRY(check("truncate", true));
    return record_truncate(*node_, length, core_->max_file_size, path_);
  }

  result<std::uint64_t> size() override {
    std::lock_guard guard(core_->mutex);
    AGENTCTX_TRY(check("stat", false));
    return static_cast<std::uint64_t>(node_->current->size());
  }

  result<void> close() override {
    std::lock_guard guard(core_->mutex);
    AGENTCTX_TRY(check("close", false));
    closed_ = true;
    return {};
  }

  const std::string& path() const noexcept override { return path_; }

 private:
  result<void> check(const char* operation, bool for_write) const {
    if (closed_) return system_failure(operation, EBADF, path_);
    if (epoch_ != core_->epoch) return unexpected(invalidated_handle_error(operation, path_));
    if (for_write && !writable_) return system_failure(operation, EBADF, path_);
    return {};
  }

  std::shared_ptr<memory_core> core_;
  std::shared_ptr<memory_node> node_;
  std::string path_;
  std::uint64_t epoch_;
  bool writable_;
  bool closed_ = false;
};

class memory_file_lock final : public file_lock {
 public:
  memory_file_lock(std::shared_ptr<memory_core> core, std::shared_ptr<memory_node> node, lock_mode mode)
      : core_(std::move(core)), node_(std::move(node)), epoch_(core_->epoch), mode_(mode) {}
  memory_file_lock(const memory_file_lock&) = delete;
  memory_file_lock& operator=(const memory_file_lock&) = delete;

  ~memory_file_lock() override {
    std::lock_guard guard(core_->mutex);
    if (epoch_ != core_->epoch) return;  // a crash already released every lock
    if (mode_ == lock_mode::exclusive) {
      node_->exclusive_lock = false;
    } else {
      --node_->shared_locks;
    }
    core_->lock_released.notify_all();
  }

 private:
  std::shared_ptr<memory_core> core_;
  std::shared_ptr<memory_node> node_;
  std::uint64_t epoch_;
  lock_mode mode_;
};

// Deep copy of a node graph that keeps inodes shared between names (and
// between current and durable entries) shared in the copy. Locks are not
// copied; byte buffers are shared copy-on-write.
inline std::shared_ptr<memory_node> copy_node(const memory_node& node,
                                              std::map<const memory_node*, std::shared_ptr<memory_node>>& copies) {
  if (auto it = copies.find(&node); it != copies.end()) return it->second;
  auto copy = std::make_shared<memory_node>();
  copies.emplace(&node, copy);
  copy->directory = node.directory;
  copy->durable = node.durable;
  copy->current = node.current;
  copy->pending = node.pending;
  for (const auto& [name, child] : node.entries) copy->entries.emplace(name, copy_node(*child, copies));
  for (const auto& [name, child] : node.durable_entries) copy->durable_entries.emplace(name, copy_node(*child, copies));
  return copy;
}

// Builds the post-crash node graph: only durable directory entries, and for
// every file the bytes the crash mode lets survive.
class crash_image_builder {
 public:
  crash_image_builder(const crash_mode& mode, std::map<const memory_node*, std::size_t> kept_for_node)
      : mode_(mode), kept_for_node_(std::move(kept_for_node)), random_state_(mode.seed) {}

  std::shared_ptr<memory_node> rebuild(const memory_node& old) {
    if (auto it = rebuilt_.find(&old); it != rebuilt_.end()) return it->second;
    auto fresh = old.directory ? make_directory_node() : std::make_shared<memory_node>();
    rebuilt_.emplace(&old, fresh);
    if (old.directory) {
      for (const auto& [name, child] : old.durable_entries) fresh->entries.emplace(name, rebuild(*child));
      fresh->durable_entries = fresh->entries;
    } else {
      fresh->durable = surviving_contents(old);
      fresh->current = fresh->durable;
    }
    return fresh;
  }

 private:
  // splitmix64: tiny, and unlike <random> distributions the same on every
  // standard library, so a seed names one crash image everywhere.
  std::uint64_t next_random() {
    std::uint64_t z = (random_state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::size_t random_below(std::size_t bound) { return bound == 0 ? 0 : static_cast<std::size_t>(next_random() % bound); }

  std::shared_ptr<byte_buffer> surviving_contents(const memory_node& file) {
    if (file.pending.empty() || mode_.policy == crash_policy::drop_unsynced) return file.durable;
    if (mode_.policy == crash_policy::random_pages) return random_pages_image(file);
    std::size_t kept;
    if (mode_.policy == crash_policy::keep_prefix) {
      auto it = kept_for_node_.find(&file);
      kept = std::min(it != kept_for_node_.end() ? it->second : mode_.kept_operations, file.pending.size());
    } else {
      kept = random_below(file.pending.size() + 1);
    }
    if (kept == 0) return file.durable;
    auto bytes = std::make_shared<byte_buffer>(*file.durable);
    for (std::size_t i = 0; i < kept; ++i) {
      const memory_operation& operation = file.pending[i];
      std::size_t limit = std::numeric_limits<std::size_t>::max();
      if (i + 1 == kept && mode_.tear_last_kept_write && operation.type == unsynced_operation::kind::write) {
        std::size_t size = operation.data->size();
        limit = mode_.policy == crash_policy::keep_prefix ? std::min(mode_.torn_write_bytes, size) : random_below(size);
      }
      apply_operation(*bytes, operation, limit);
    }
    return bytes;
  }

  std::shared_ptr<byte_buffer> random_pages_image(const memory_node& file) {
    const byte_buffer& durable = *file.durable;
    const byte_buffer& current = *file.current;
    std::size_t length = (next_random() & 1) != 0 ? current.size() : durable.size();
    auto bytes = std::make_shared<byte_buffer>(length);
    for (std::size_t start = 0; start < length; start += crash_mode::page_size) {
      const byte_buffer& source = (next_random() & 1) != 0 ? current : durable;
      std::size_t count = std::min(crash_mode::page_size, length - start);
      if (start < source.size()) {
        std::memcpy(bytes->data() + start, source.data() + start, std::min(count, source.size() - start));
      }
    }
    return bytes;
  }

  const crash_mode& mode_;
  std::map<const memory_node*, std::size_t> kept_for_node_;
  std::map<const memory_node*, std::shared_ptr<memory_node>> rebuilt_;
  std::uint64_t random_state_;
};

}  // namespace detail

inline memory_file_system::memory_file_system() : memory_file_system(memory_file_system_options{}) {}

inline memory_file_system::memory_file_system(memory_file_system_options options)
    : core_(std::make_shared<detail::memory_core>(options)) {}

inline result<std::unique_ptr<file>> memory_file_system::open(const std::string& path, open_options options) {
  AGENTCTX_TRY(detail::check_open_options(options, path));
  auto parts = detail::split_path(path);
  std::lock_guard guard(core_->mutex);
  auto parent = detail::resolve_parent(*core_, parts, "open", path);
  if (!parent) return unexpected(std::move(parent).error());
  auto& entries = (*parent)->entries;
  std::shared_ptr<detail::memory_node> node;
  if (auto it = entries.find(parts.back()); it != entries.end()) {
    node = it->second;
    if (node->directory) return detail::system_failure("open", EISDIR, path);
    if (options.create && options.exclusive) return detail::system_failure("open", EEXIST, path);
    if (options.truncate) AGENTCTX_TRY(detail::record_truncate(*node, 0, core_->max_file_size, path));
  } else {
    if (!options.create) return detail::system_failure("open", ENOENT, path);
    node = detail::make_file_node();
    entries.emplace(parts.back(), node);
  }
  return std::unique_ptr<file>(
      std::make_unique<detail::memory_file>(core_, std::move(node), path, options.write, core_->epoch));
}

inline result<mapped_bytes> memory_file_system::map(const std::string& path) {
  auto parts = detail::split_path(path);
  std::lock_guard guard(core_->mutex);
  auto node = detail::resolve_file(*core_, parts, "map", path);
  if (!node) return unexpected(std::move(node).error());
  return mapped_bytes::share((*node)->current);
}

inline result<void> memory_file_system::rename(const std::string& from, const std::string& to) {
  auto source_parts = detail::split_path(from);
  auto target_parts = detail::split_path(to);
  std::lock_guard guard(core_->mutex);
  if (source_parts.empty() || target_parts.empty()) return detail::system_failure("rename", EBUSY, from);
  auto source_parent = detail::resolve_parent(*core_, source_parts, "rename", from);
  if (!source_parent) return unexpected(std::move(source_parent).error());
  auto source = (*source_parent)->entries.find(source_parts.back());
  if (source == (*source_parent)->entries.end()) return detail::system_failure("rename", ENOENT, from);
  auto target_parent = detail::resolve_parent(*core_, target_parts, "rename", to);
  if (!target_parent) return unexpected(std::move(target_parent).error());
  if (source_parts == target_parts) return {};
  std::shared_ptr<detail::memory_node> node = source->second;
  if (node->directory && target_parts.size() > source_parts.size() &&
      std::equal(source_parts.begin(), source_parts.end(), target_parts.begin())) {
    return detail::system_failure("rename", EINVAL, to);  // into its own subtree
  }
  auto& target_entries = (*target_parent)->entries;
  if (auto target = target_entries.find(target_parts.back()); target != target_entries.end()) {
    const auto& existing = *target->second;
    if (!node->directory && existing.directory) return detail::system_failure("rename", EISDIR, to);
    if (node->directory && !existing.directory) return detail::system_failure("rename", ENOTDIR, to);
    if (node->directory && !existing.entries.empty()) return detail::system_failure("rename", ENOTEMPTY, to);
  }
  (*source_parent)->entries.erase(source);
  target_entries[target_parts.back()] = std::move(node);
  return {};
}

inline result<void> memory_file_system::remove(const std::string& path) {
  auto parts = detail::split_path(path);
  std::lock_guard guard(core_->mutex);
  auto parent = detail::resolve_parent(*core_, parts, "remove", path);
  if (!parent) return unexpected(std::move(parent).error());
  auto& entries = (*parent)->entries;
  auto it = entries.find(parts.back());
  if (it == entries.end()) return detail::system_failure("remove", ENOENT, path);
  if (it->second->directory) return detail::system_failure("remove", EISDIR, path);
  entries.erase(it);
  return {};
}

inline result<void> memory_file_system::remove_dir(const std::string& path) {
  auto parts = detail::split_path(path);
  std::lock_guard guard(core_->mutex);
  if (parts.empty()) return detail::system_failure("remove directory", EBUSY, path);  // the root
  auto parent = detail::resolve_parent(*core_, parts, "remove directory", path);
  if (!parent) return unexpected(std::move(parent).error());
  auto& entries = (*parent)->entries;
  auto it = entries.find(parts.back());
  if (it == entries.end()) return detail::system_failure("remove directory", ENOENT, path);
  if (!it->second->directory) return detail::system_failure("remove directory", ENOTDIR, path);
  if (!it->second->entries.empty()) return detail::system_failure("remove directory", ENOTEMPTY, path);
  entries.erase(it);
  return {};
}

inline result<void> memory_file_system::sync_dir(const std::string& dir) {
  auto parts = detail::split_path(dir);
  std::lock_guard guard(core_->mutex);
  auto node = detail::resolve_directory(*core_, parts, "open", dir);
  if (!node) return unexpected(std::move(node).error());
  (*node)->durable_entries = (*node)->entries;
  return {};
}

inline result<void> memory_file_system::create_dir(const std::string& path) {
  auto parts = detail::split_path(path);
  std::lock_guard guard(core_->mutex);
  if (parts.empty()) return {};
  auto parent = detail::resolve_parent(*core_, parts, "create directory", path);
  if (!parent) return unexpected(std::move(parent).error());
  auto& entries = (*parent)->entries;
  if (auto it = entries.find(parts.back()); it != entries.end()) {
    if (it->second->directory) return {};
    return detail::system_failure("create directory", EEXIST, path);
  }
  entries.emplace(parts.back(), detail::make_directory_node());
  return {};
}

inline result<bool> memory_file_system::exists(const std::string& path) {
  auto parts = detail::split_path(path);
  std::lock_guard guard(core_->mutex);
  int error = 0;
  return detail::find_node(core_->root, parts, parts.size(), &detail::memory_node::entries, error) != nullptr;
}

inline result<std::uint64_t> memory_file_system::file_size(const std::string& path) {
  auto parts = detail::split_path(path);
  std::lock_guard guard(core_->mutex);
  auto node = detail::resolve_file(*core_, parts, "stat", path);
  if (!node) return unexpected(std::move(node).error());
  return static_cast<std::uint64_t>((*node)->current->size());
}

inline result<std::vector<std::string>> memory_file_system::list_dir(const std::string& dir) {
  auto parts = detail::split_path(dir);
  std::lock_guard guard(core_->mutex);
  auto node = detail::resolve_directory(*core_, parts, "list directory", dir);
  if (!node) return unexpected(std::move(node).error());
  std::vector<std::string> names;
  names.reserve((*node)->entries.size());
  for (const auto& entry : (*node)->entries) names.push_back(entry.first);
  return names;
}

inline result<std::unique_ptr<file_lock>> memory_file_system::lock(const std::string& path, lock_mode mode,
                                                                   bool wait) {
  auto parts = detail::split_path(path);
  std::unique_lock guard(core_->mutex);
  std::shared_ptr<detail::memory_node> node;
  // The file at `path` when the lock is taken: one removed or replaced while
  // this call waited is let go, and `path` is looked up again.
  const auto at_path = [&] {
    int error = 0;
    return detail::find_node(core_->root, parts, parts.size(), &detail::memory_node::entries, error) == node;
  };
  int attempts = 0;
  do {
    if (++attempts > detail::lock_attempts) return detail::lock_file_keeps_changing(path);
    auto parent = detail::resolve_parent(*core_, parts, "open", path);
    if (!parent) return unexpected(std::move(parent).error());
    auto [it, created] = (*parent)->entries.try_emplace(parts.back());
    if (created) it->second = detail::make_file_node();
    node = it->second;
    if (node->directory) return detail::system_failure("open", EISDIR, path);
    auto compatible = [&] {
      return mode == lock_mode::shared ? !node->exclusive_lock : !node->exclusive_lock && node->shared_locks == 0;
    };
    if (!compatible()) {
      if (!wait) return unexpected(detail::system_error(errc::locked, "lock", EWOULDBLOCK, path));
      std::uint64_t epoch = core_->epoch;
      ++core_->lock_waiters;
      core_->lock_released.wait(guard, [&] { return core_->epoch != epoch || compatible(); });
      --core_->lock_waiters;
      if (core_->epoch != epoch) return unexpected(detail::invalidated_handle_error("lock", path));
    }
  } while (!at_path());
  if (mode == lock_mode::exclusive) {
    node->exclusive_lock = true;
  } else {
    ++node->shared_locks;
  }
  return std::unique_ptr<file_lock>(std::make_unique<detail::memory_file_lock>(core_, std::move(node), mode));
}

inline std::size_t memory_file_system::lock_waiters() const {
  std::lock_guard guard(core_->mutex);
  return core_->lock_waiters;
}

inline void memory_file_system::simulate_crash(const crash_mode& mode) {
  std::lock_guard guard(core_->mutex);
  std::map<const detail::memory_node*, std::size_t> kept_for_node;
  for (const auto& [path, kept] : mode.kept_operations_for_path) {
    auto parts = detail::split_path(path);
    int error = 0;
    auto node = detail::find_node(core_->root, parts, parts.size(), &detail::memory_node::entries, error);
    if (!node) node = detail::find_node(core_->root, parts, parts.size(), &detail::memory_node::durable_entries, error);
    if (node && !node->directory) kept_for_node[node.get()] = kept;
  }
  detail::crash_image_builder builder(mode, std::move(kept_for_node));
  core_->root = builder.rebuild(*core_->root);
  ++core_->epoch;
  core_->lock_released.notify_all();
}

inline memory_file_system_state memory_file_system::snapshot() const {
  std::lock_guard guard(core_->mutex);
  std::map<const detail::memory_node*, std::shared_ptr<detail::memory_node>> copies;
  memory_file_system_state saved;
  saved.root_ = detail::copy_node(*core_->root, copies);
  return saved;
}

inline void memory_file_system::restore(const memory_file_system_state& saved) {
  std::lock_guard guard(core_->mutex);
  std::map<const detail::memory_node*, std::shared_ptr<detail::memory_node>> copies;
  core_->root = saved.root_ ? detail::copy_node(*saved.root_, copies) : detail::make_directory_node();
  ++core_->epoch;
  core_->lock_released.notify_all();
}

inline result<std::vector<unsynced_operation>> memory_file_system::unsynced_operations(const std::string& path) const {
  auto parts = detail::split_path(path);
  std::lock_guard guard(core_->mutex);
  auto node = detail::resolve_file(*core_, parts, "stat", path);
  if (!node) return unexpected(std::move(node).error());
  std::vector<unsynced_operation> operations;
  operations.reserve((*node)->pending.size());
  for (const auto& operation : (*node)->pending) {
    bool is_write = operation.type == unsynced_operation::kind::write;
    operations.push_back({operation.type, operation.offset, is_write ? operation.data->size() : 0});
  }
  return operations;
}

inline result<std::size_t> memory_file_system::unsynced_operation_count(const std::string& path) const {
  auto parts = detail::split_path(path);
  std::lock_guard guard(core_->mutex);
  auto node = detail::resolve_file(*core_, parts, "stat", path);
  if (!node) return unexpected(std::move(node).error());
  return (*node)->pending.size();
}

inline result<void> memory_file_system::write_whole(const std::string& path, std::span<const std::byte> bytes) {
  auto handle = open(path, create_truncate);
  if (!handle) return unexpected(std::move(handle).error());
  AGENTCTX_TRY((*handle)->write_at(0, bytes));
  AGENTCTX_TRY((*handle)->sync());
  AGENTCTX_TRY((*handle)->close());
  return sync_dir(parent_directory(path));
}

inline result<void> memory_file_system::write_whole(const std::string& path, std::string_view text) {
  return write_whole(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

inline result<std::vector<std::byte>> memory_file_system::read_whole(const std::string& path) const {
  auto parts = detail::split_path(path);
  std::lock_guard guard(core_->mutex);
  auto node = detail::resolve_file(*core_, parts, "read", path);
  if (!node) return unexpected(std::move(node).error());
  return *(*node)->current;
}

}  // namespace agentctx::io
