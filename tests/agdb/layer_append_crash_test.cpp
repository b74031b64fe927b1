// Crash safety of agent writes (agdb::append_chunk): the process dies at
// every mutating operation of the rewrite in turn (fault-injecting file
// system over the in-memory one), then the machine loses power in every way
// the in-memory file system can model, or keeps running. Afterwards the layer
// file is the old file or the new one, byte for byte, and valid; a layer
// being created is absent or complete; and the next write succeeds and leaves
// no temporary file behind. On the real disk, a writer process killed in the
// middle of a write leaves a temporary that the next write removes.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_append.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "io/io_test_support.hpp"

namespace agdb_layer_append_crash_test {

namespace agdb = agentctx::agdb;
namespace io = agentctx::io;
using bytes = std::vector<std::byte>;

namespace {

const std::string directory = "/repo";
const std::string layer_path = "/repo/AGENTS.local.db";
const std::vector<agdb::layer_location> layers = agdb::standard_layer_locations(directory);

// Just over the writer's 1 MiB staging buffer (mostly text), so that the
// rewrite takes two writes and a crash can keep the first one alone.
constexpr std::size_t existing_chunks = 150;
constexpr std::size_t content_bytes = 7200;
constexpr std::uint32_t dim = 256;

agdb::chunk_write local_note(std::string content) {
  agdb::chunk_write w;
  w.scope = agdb::layer_id::local;
  w.content = std::move(content);
  w.kind = "derived-summary";
  w.confidence = 0.7f;
  w.sources = {agdb::source_ref::to_string("docs/ARCHITECTURE.md:12")};
  w.created_at_unix_ms = 1'700'000'000'000;  // so that every run writes the same bytes
  return w;
}

/// The layer the crashed write appends to: `existing_chunks` chunks of
/// `content_bytes` of text each, embedded by the hash embedder the writes use.
agdb::layer_contents existing_layer() {
  agdb::hash_embedder embedder(dim);
  agdb::layer_contents layer;
  layer.metadata_json = agdb::layer_metadata_json(embedder.profile(), "agentctx", "0.1.0");
  layer.embeddings.dim = dim;
  layer.embeddings.f32_values.resize(existing_chunks * dim);
  for (std::size_t i = 0; i < existing_chunks; ++i) {
    agdb::chunk c;
    c.id = static_cast<std::uint32_t>(1000 + i);
    c.kind = i % 3 == 0 ? "canonical" : "note";
    c.author = i % 2 == 0 ? "human" : "mcp";
    c.created_at_unix_ms = 1'690'000'000'000 + i;
    for (std::size_t line = 0; c.content.size() < content_bytes; ++line) {
      c.content += "Chunk " + std::to_string(i) + ", line " + std::to_string(line) +
                   ": layers are replaced whole, never patched in place.\n";
    }
    c.sources = {agdb::source_ref::to_string("docs/layers.md:" + std::to_string(i + 1))};
    const std::string_view text = c.content;
    REQUIRE(embedder.embed(std::span(&text, 1), std::span(layer.embeddings.f32_values).subspan(i * dim, dim))
                .has_value());
    layer.chunks.push_back(std::move(c));
  }
  return layer;
}

/// A memory file system holding the durable directory and, when given, the
/// durable layer.
void set_up(io::memory_file_system& memory, const std::optional<agdb::layer_contents>& layer) {
  REQUIRE(memory.create_dir(directory).has_value());
  REQUIRE(memory.sync_dir("/").has_value());
  if (layer) REQUIRE(agdb::write_layer(memory, layer_path, *layer).has_value());
}

std::vector<std::string> names_in(io::file_system& fs, const std::string& folder) {
  auto names = fs.list_dir(folder);
  if (!names) FAIL(names.error().describe());
  return std::move(*names);
}

std::optional<bytes> layer_bytes(io::memory_file_system& memory) {
  if (!memory.exists(layer_path).value()) return std::nullopt;
  auto read = memory.read_whole(layer_path);
  REQUIRE(read.has_value());
  return std::move(*read);
}

void check_valid(const bytes& file) {
  auto reader = agdb::layer_reader::from_bytes(file, layer_path);
  if (!reader) FAIL(reader.error().describe());
  CHECK(agdb::validate(*reader, 1).empty());
}

/// Runs the write under test (the same bytes every time) through `fs`.
agentctx::result<agdb::write_outcome> crashed_write(io::file_system& fs) {
  agdb::hash_embedder embedder(dim);
  return agdb::append_chunk(fs, layers, local_note("The write that crashes: its layer is the old or the new one."),
                            embedder);
}

/// The first write after the crash: it must succeed, remove every temporary
/// left behind and append to whichever file the crash left.
void check_next_write(io::memory_file_system& memory, std::size_t chunks_found) {
  agdb::hash_embedder embedder(dim);
  auto next = agdb::append_chunk(memory, layers, local_note("The write after the crash."), embedder);
  if (!next) FAIL(next.error().describe());
  CHECK(next->chunk_count == chunks_found + 1);
  for (const std::string& name : names_in(memory, directory)) {
    CAPTURE(name);
    CHECK((name == "AGENTS.local.db" || name == "AGENTS.local.db.lock"));
  }
  const std::optional<bytes> after = layer_bytes(memory);
  REQUIRE(after.has_value());
  check_valid(*after);
}

/// The power-loss images the in-memory file system can make of its state now
/// (io/atomic_file_test.cpp tries more on a small file), plus no power loss
/// at all: every prefix of the unsynced writes, the last one torn, and
/// pages kept at random.
std::vector<std::optional<io::crash_mode>> crash_modes(io::memory_file_system& memory) {
  std::size_t most_unsynced = 0;
  for (const std::string& name : names_in(memory, directory)) {
    most_unsynced = std::max(most_unsynced, memory.unsynced_operation_count(directory + "/" + name).value());
  }
  std::vector<std::optional<io::crash_mode>> modes = {std::nullopt, io::crash_mode::drop_unsynced(),
                                                      io::crash_mode::keep_all_unsynced(),
                                                      io::crash_mode::random_pages(1)};
  for (std::size_t kept = 1; kept < most_unsynced; ++kept) modes.push_back(io::crash_mode::keep_prefix(kept));
  if (most_unsynced > 0) modes.push_back(io::crash_mode::keep_prefix_torn(most_unsynced, 4096 + 7));
  return modes;
}

/// Crashes the write at every mutating operation in turn (writes also torn
/// part-way), tries every crash image, and checks each with
/// `check_layer(found, rename_done)`, which returns the chunk count of the
/// layer found; then checks the next write. The rewrite must take at least
/// `least_writes` writes.
template <class CheckLayer>
void crash_at_every_operation(io::memory_file_system& memory, const io::memory_file_system_state& initial,
                              std::ptrdiff_t least_writes, CheckLayer&& check_layer) {
  std::size_t leftovers = 0;  // images holding the crashed write's temporary file
  const auto inspect = [&](const io_test::crash_point& point) {
    const io::memory_file_system_state at_fault = memory.snapshot();
    for (const std::optional<io::crash_mode>& mode : crash_modes(memory)) {
      CAPTURE(mode.has_value());
      memory.restore(at_fault);
      if (mode) memory.simulate_crash(*mode);
      for (const std::string& name : names_in(memory, directory)) {
        if (name.rfind(".AGENTS.local.db.tmp.", 0) == 0) ++leftovers;
      }
      // A fault before the rename completed leaves the rename undone.
      check_next_write(memory, check_layer(layer_bytes(memory), point.completed(io::operation_kind::rename)));
    }
  };
  const auto history = io_test::crash_at_every_operation(memory, initial, 4096 + 7, crashed_write, inspect);
  const auto count = [&](io::operation_kind kind) {
    return std::count_if(history.begin(), history.end(), [&](const auto& op) { return op.kind == kind; });
  };
  // The rewrite is what the test claims to cover: its writes, the file
  // sync, the rename and the directory sync.
  CHECK(count(io::operation_kind::write) >= least_writes);
  CHECK(count(io::operation_kind::sync) == 1);
  CHECK(count(io::operation_kind::rename) == 1);
  CHECK(count(io::operation_kind::sync_dir) == 1);
  // Without a power loss the temporary survives the dead writer: the next
  // write must have removed it (check_next_write).
  CHECK(leftovers > 0);
}

}  // namespace

TEST_CASE("append_chunk: a crash at any operation of the rewrite leaves the old or the new layer, never a mix") {
  io::memory_file_system memory;
  const agdb::layer_contents existing = existing_layer();
  set_up(memory, existing);
  const io::memory_file_system_state initial = memory.snapshot();
  const bytes old_file = *layer_bytes(memory);

  // The write without a fault, to learn the new file.
  REQUIRE(crashed_write(memory).has_value());
  memory.simulate_crash();  // a completed write is durable
  const std::optional<bytes> new_file = layer_bytes(memory);
  REQUIRE(new_file.has_value());
  CHECK(*new_file != old_file);
  check_valid(*new_file);
  memory.restore(initial);

  crash_at_every_operation(memory, initial, 2, [&](const std::optional<bytes>& found, bool rename_done) {
    REQUIRE(found.has_value());
    const bool is_old = *found == old_file;
    CHECK((is_old || *found == *new_file));
    if (!rename_done) CHECK(is_old);
    check_valid(*found);
    return existing_chunks + (is_old ? 0 : 1);
  });
}

TEST_CASE("append_chunk: a crash while creating a layer leaves no layer or the complete one") {
  io::memory_file_system memory;
  set_up(memory, std::nullopt);
  const io::memory_file_system_state initial = memory.snapshot();

  REQUIRE(crashed_write(memory).has_value());
  memory.simulate_crash();
  const std::optional<bytes> new_file = layer_bytes(memory);
  REQUIRE(new_file.has_value());
  memory.restore(initial);

  crash_at_every_operation(memory, initial, 1, [&](const std::optional<bytes>& found, bool rename_done) {
    if (!found) return std::size_t{0};
    CHECK(rename_done);
    CHECK(*found == *new_file);
    check_valid(*found);
    return std::size_t{1};
  });
}

TEST_CASE("append_chunk: the temporary of a writer process killed mid-write is removed by the next write") {
  io_test::temporary_directory dir;
  io::file_system& fs = io::default_file_system();
  const std::vector<agdb::layer_location> disk_layers = agdb::standard_layer_locations(dir.path());
  const std::string path = dir.path() + "/AGENTS.local.db";
  agdb::hash_embedder embedder(16);
  REQUIRE(agdb::append_chunk(fs, disk_layers, local_note("Before the killed writer."), embedder).has_value());
  const std::string before = io_test::read_text(fs, path);

  // The child starts replacing the layer, writes part of it and dies.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto writer = io::atomic_file_writer::begin(fs, path);
    if (writer && writer->append(io_test::bytes_of(std::string(10000, 'x')))) ::raise(SIGKILL);
    ::_exit(1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  const std::string leftover = ".AGENTS.local.db.tmp." + std::to_string(child) + ".";
  const auto left = names_in(fs, dir.path());
  const auto is_leftover = [&](const std::string& name) { return name.rfind(leftover, 0) == 0; };
  REQUIRE(std::count_if(left.begin(), left.end(), is_leftover) == 1);
  CHECK(io_test::read_text(fs, path) == before);

  auto next = agdb::append_chunk(fs, disk_layers, local_note("After the killed writer."), embedder);
  REQUIRE(next.has_value());
  CHECK(next->chunk_count == 2);
  CHECK(names_in(fs, dir.path()) == std::vector<std::string>{"AGENTS.local.db", "AGENTS.local.db.lock"});
}

}  // namespace agdb_layer_append_crash_test
