// AGDB writers killed at any write or sync (the machine lives on, their
// unsynced writes and renames stay in the page cache), the next writer
// answering a retried request on top of what it finds, then a power loss:
// nothing the next writer acknowledged may be lost (the pattern of the
// "killed" tests of tests/relay/crash_paths_test.cpp, support/killed_writer.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/embedding_cache.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_compact.hpp"
#include "agentctx/agdb/layer_append.hpp"
#include "agentctx/agdb/layer_export.hpp"
#include "agentctx/agdb/layer_import.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/agdb/proposals.hpp"
#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "support/crash_images.hpp"
#include "support/hash_layer.hpp"
#include "support/killed_writer.hpp"

namespace agdb_killed_writer_test {

namespace agdb = agentctx::agdb;
namespace io = agentctx::io;

namespace {

const std::vector<agdb::layer_location> layers = agdb::standard_layer_locations("/repo");
const std::string base_path = "/repo/AGENTS.db";
const std::string user_path = "/repo/AGENTS.user.db";
const std::string delta_path = "/repo/AGENTS.delta.db";

/// /repo (durable) with a base layer and a delta layer of agent chunks 100..102.
void review_repo(io::memory_file_system& fs) {
  REQUIRE(fs.create_dir("/repo").has_value());
  REQUIRE(fs.sync_dir("/").has_value());
  test_support::write_hash_layer(fs, base_path, {{1, "canonical", "Releases are cut on Fridays."}});
  test_support::write_hash_layer(fs, delta_path,
                                 {{100, "invariant", "Requests to /foo MUST include header Bar."},
                                  {101, "note", "The build needs cmake 3.25."},
                                  {102, "note", "Friday releases skip holidays."}});
}

/// The layer's chunk contents, or nullopt when it cannot be read.
std::optional<std::set<std::string>> contents_of(io::file_system& fs, const std::string& path) {
  auto reader = agdb::layer_reader::open(fs, path);
  if (!reader) return std::nullopt;
  std::set<std::string> out;
  for (std::size_t i = 0; i < reader->chunk_count(); ++i) {
    auto c = reader->chunk(i);
    if (!c) return std::nullopt;
    out.insert(std::string(c->content));
  }
  return out;
}

}  // namespace

// Failed at 1d35034 (fixed since), killed at the sync_dir after the delta layer (holding the
// new propose event) is renamed into place: the retried propose_promotion
// finds the pending proposal in the page cache and answers already_pending
// ("nothing was written") without syncing the file or the folder, and the
// power loss brings back the delta layer without the proposal.
TEST_CASE("agdb: propose_promotion retried after its writer was killed is answered already_pending only once durable") {
  io::memory_file_system memory;
  review_repo(memory);
  const io::memory_file_system_state initial = memory.snapshot();
  io::fault_injecting_file_system faulty(memory);
  const auto propose = [](io::file_system& fs) {
    agdb::proposal_request request;
    request.context_id = 100;
    request.title = "promote the header rule";
    request.created_at_unix_ms = 1'000;
    return agdb::propose_promotion(fs, layers, request);
  };
  REQUIRE(propose(faulty).has_value());
  const std::uint64_t images = killed_writer::kill_at_every_operation(
      memory, initial, faulty, 3001, [&](io::file_system& fs) { return propose(fs).has_value(); },
      [&](io::memory_file_system& m, const std::string& where) -> std::optional<std::uint32_t> {
        auto again = propose(m);
        if (!again) {
          FAIL_CHECK(where << ": propose again: " << again.error().describe());
          return std::nullopt;
        }
        return again->proposal_id;
      },
      [](io::memory_file_system& m, std::uint32_t proposal_id, const std::string& image) {
        crash_support::image_expectations expect(image);
        auto reader = agdb::layer_reader::open(m, delta_path);
        if (!expect(reader.has_value(), "the delta layer does not open")) return;
        auto ledger = agdb::fold_proposals(*reader);
        if (!expect(ledger.has_value(), "the delta layer's events do not fold")) return;
        const agdb::proposal* p = ledger->pending_for(100);
        expect(p != nullptr && p->id == proposal_id,
               "the acknowledged pending proposal " + std::to_string(proposal_id) + " of chunk 100 is gone");
      });
  MESSAGE("power-loss images checked: " << images);
  CHECK(images >= 20);
}

// Failed at 1d35034 (fixed since) (an error answer, not a success): killed at the sync_dir
// after the delta layer holding the accept event is renamed into place (the
// user layer's copy was made durable before), accept_proposals run again
// refuses with "proposal N was already accepted by alice", read from the
// page cache and never synced; the power loss brings the proposal back as
// pending.
TEST_CASE("agdb: accept_proposals retried after its writer was killed says 'already accepted' only once durable") {
  io::memory_file_system memory;
  review_repo(memory);
  std::uint32_t proposal_id = 0;
  {
    agdb::proposal_request request;
    request.context_id = 101;
    request.created_at_unix_ms = 1'000;
    auto proposed = agdb::propose_promotion(memory, layers, request);
    REQUIRE(proposed.has_value());
    proposal_id = proposed->proposal_id;
  }
  const io::memory_file_system_state initial = memory.snapshot();
  io::fault_injecting_file_system faulty(memory);
  agdb::review_options reviewer;
  reviewer.actor = "alice";
  reviewer.now_unix_ms = 2'000;
  const auto accept = [&](io::file_system& fs) {
    return agdb::accept_proposals(fs, layers, std::span(&proposal_id, 1), reviewer);
  };
  REQUIRE(accept(faulty).has_value());
  const std::uint64_t images = killed_writer::kill_at_every_operation(
      memory, initial, faulty, 3005, [&](io::file_system& fs) { return accept(fs).has_value(); },
      [&](io::memory_file_system& m, const std::string& where) -> std::optional<bool> {
        auto again = accept(m);
        if (again) return true;
        // The answer the reviewer gets: it was accepted already.
        if (again.error().message.find("already accepted") != std::string::npos) return true;
        FAIL_CHECK(where << ": accept again: " << again.error().describe());
        return std::nullopt;
      },
      [&](io::memory_file_system& m, bool, const std::string& image) {
        crash_support::image_expectations expect(image);
        auto reader = agdb::layer_reader::open(m, delta_path);
        if (!expect(reader.has_value(), "the delta layer does not open")) return;
        auto ledger = agdb::fold_proposals(*reader);
        if (!expect(ledger.has_value(), "the delta layer's events do not fold")) return;
        const agdb::proposal* p = ledger->find(proposal_id);
        expect(p != nullptr && p->status == agdb::proposal_status::accepted,
               "proposal " + std::to_string(proposal_id) + ", answered as accepted, is not accepted");
        const auto user = contents_of(m, user_path);
        expect(user.has_value() && user->count("The build needs cmake 3.25.") == 1,
               "the promoted chunk is not in the user layer");
      });
  MESSAGE("power-loss images checked: " << images);
  CHECK(images >= 20);
}

// Failed at 1d35034 (fixed since); a plain power loss, not a killed writer: compact --archive
// renames the user and delta layers into the archive folder and syncs the
// layers' folder (their removal) before it syncs the archive folder (their
// new entries), and never syncs the archive folder's parent after creating
// it. A power loss between the two syncs loses the delta layer (which the
// new base does not hold) altogether.
TEST_CASE("agdb: compact --archive crashed at any operation: the delta layer is where it was or in the archive") {
  io::memory_file_system memory;
  review_repo(memory);
  test_support::write_hash_layer(memory, user_path, {{7, "note", "A user note."}});
  const io::memory_file_system_state initial = memory.snapshot();
  io::fault_injecting_file_system faulty(memory);
  agdb::compact_request request;
  request.base = base_path;
  request.user = user_path;
  request.delta = delta_path;
  request.out = "/repo/AGENTS.db.new";
  request.archive = "/repo/archive";
  request.now_unix_ms = 1'700'000'000'000;
  const auto workload = [&](io::file_system& fs) { return agdb::compact_layers(fs, request).has_value(); };
  REQUIRE(workload(faulty));
  const std::string archived_delta = "/repo/archive/AGENTS.delta.20231114T221320Z.db";
  const std::uint64_t images = crash_support::crash_at_every_operation(
      memory, initial, faulty, 3006, 200, workload, [&](io::memory_file_system& m, bool, const std::string& image) {
        crash_support::image_expectations expect(image);
        const auto delta = contents_of(m, delta_path);
        const auto archived = contents_of(m, archived_delta);
        const auto holds = [](const std::optional<std::set<std::string>>& c) {
          return c && c->count("The build needs cmake 3.25.") == 1;
        };
        expect(holds(delta) || holds(archived), "the delta layer is neither in place nor in the archive");
      });
  MESSAGE("crash images checked: " << images);
  CHECK(images >= 20);
}

namespace {

agdb::export_bundle export_of(const std::vector<test_support::layer_entry>& entries) {
  io::memory_file_system fs;
  test_support::write_hash_layer(fs, "/src.db", entries);
  auto reader = agdb::layer_reader::open(fs, "/src.db");
  REQUIRE(reader.has_value());
  std::vector<agdb::export_input> inputs{{&*reader, "AGENTS.local.db", agdb::layer_id::local}};
  std::string text;
  REQUIRE(agdb::write_export(inputs, {}, [&](std::string_view piece) -> agentctx::result<void> {
            text += piece;
            return {};
          }).has_value());
  auto bundle = agdb::parse_export(text);
  REQUIRE(bundle.has_value());
  return std::move(*bundle);
}

}  // namespace

// Failed at 1d35034 (fixed since), killed at the sync_dir after the user layer is renamed into
// place: the import run again finds every chunk by content (dedupe), adds
// nothing and succeeds ("imported 0, duplicates 3") without syncing, and the
// power loss brings back the user layer without them (or no user layer at
// all when the import created it).
TEST_CASE("agdb: import run again after its writer was killed is answered only once what it reports is durable") {
  bool existing = true;
  SUBCASE("into an existing user layer") { existing = true; }
  SUBCASE("creating the user layer") { existing = false; }
  io::memory_file_system memory;
  review_repo(memory);
  if (existing) test_support::write_hash_layer(memory, user_path, {{7, "note", "Already in the user layer."}});
  const io::memory_file_system_state initial = memory.snapshot();
  io::fault_injecting_file_system faulty(memory);
  const agdb::export_bundle bundle = export_of({{1, "note", "Imported one."},
                                                {2, "note", "Imported two."},
                                                {3, "note", "Imported three."}});
  agdb::import_request request;
  request.layers = layers;
  request.target = agdb::layer_id::user;
  const auto workload = [&](io::file_system& fs) { return agdb::import_export(fs, request, bundle).has_value(); };
  REQUIRE(workload(faulty));
  const std::uint64_t images = killed_writer::kill_at_every_operation(
      memory, initial, faulty, 3002, workload,
      [&](io::memory_file_system& m, const std::string& where) -> std::optional<std::set<std::string>> {
        auto again = agdb::import_export(m, request, bundle);
        if (!again) {
          FAIL_CHECK(where << ": import again: " << again.error().describe());
          return std::nullopt;
        }
        // The import reports every chunk as in the target now.
        return contents_of(m, user_path);
      },
      [](io::memory_file_system& m, const std::set<std::string>& acknowledged, const std::string& image) {
        crash_support::image_expectations expect(image);
        const auto now = contents_of(m, user_path);
        if (!expect(now.has_value(), "the user layer is gone or does not open")) return;
        for (const std::string& content : acknowledged) {
          if (!expect(now->count(content) == 1, "the acknowledged chunk \"" + content + "\" is gone")) return;
        }
      });
  MESSAGE("power-loss images checked: " << images);
  CHECK(images >= 20);
}

// Passes at head (kept as a guard): append_chunk never answers a retry from
// what it finds; every call rewrites the whole layer (what it read included)
// to a synced temporary file, renames it and syncs the folder.
TEST_CASE("agdb: append_chunk after a writer was killed: what the next write acknowledges survives a power loss") {
  io::memory_file_system memory;
  review_repo(memory);
  const io::memory_file_system_state initial = memory.snapshot();
  io::fault_injecting_file_system faulty(memory);
  const auto write = [](io::file_system& fs, std::string content) {
    agdb::hash_embedder embedder(128);
    agdb::chunk_write w;
    w.scope = agdb::layer_id::local;
    w.content = std::move(content);
    w.kind = "note";
    w.confidence = 0.5f;
    w.created_at_unix_ms = 1'000;
    return agdb::append_chunk(fs, layers, w, embedder);
  };
  const auto workload = [&](io::file_system& fs) { return write(fs, "The first agent note.").has_value(); };
  REQUIRE(workload(faulty));
  const std::string local_path = "/repo/AGENTS.local.db";
  const std::uint64_t images = killed_writer::kill_at_every_operation(
      memory, initial, faulty, 3003, workload,
      [&](io::memory_file_system& m, const std::string& where) -> std::optional<std::set<std::string>> {
        auto again = write(m, "The second agent note.");
        if (!again) {
          FAIL_CHECK(where << ": append again: " << again.error().describe());
          return std::nullopt;
        }
        return contents_of(m, local_path);
      },
      [&](io::memory_file_system& m, const std::set<std::string>& acknowledged, const std::string& image) {
        crash_support::image_expectations expect(image);
        const auto now = contents_of(m, local_path);
        expect(now.has_value() && *now == acknowledged, "the local layer is not what the last write acknowledged");
      });
  MESSAGE("power-loss images checked: " << images);
  CHECK(images >= 20);
}

namespace {

constexpr std::uint32_t cache_dim = 4;
const agdb::embedding_profile cache_profile{"test", "model", std::nullopt, cache_dim, "none"};

std::vector<float> vector_of(std::string_view text) {
  std::vector<float> v(cache_dim);
  for (std::size_t i = 0; i < cache_dim; ++i) v[i] = static_cast<float>(text.size() * 10 + i) + 0.25f;
  return v;
}

/// Opens the cache in /cache and inserts `text`'s vector (insert() promises
/// it durable when it returns).
bool cache_insert(io::file_system& fs, std::string_view text) {
  auto cache = agdb::embedding_cache::open(fs, "/cache", cache_profile);
  if (!cache) return false;
  const auto key = cache->key_of(text);
  const auto row = vector_of(text);
  return cache->insert(std::span(&key, 1), row).has_value();
}

}  // namespace

// Failed at 1d35034 (fixed since). "the same key": killed at the sync of the inserted record,
// the next process's open() reads the record from the page cache, so
// insert() of the same key returns at once ("every key is cached") without
// syncing, and the power loss takes the record away. "another key": killed
// at the sync of the header or the sync_dir after it, the next insert()
// finds a whole header in the page cache, appends and syncs the file but
// never syncs the folder, so the file's new directory entry, and the record
// acknowledged in it, is lost.
TEST_CASE("agdb: embedding_cache insert after a writer was killed is durable when it returns") {
  std::string retried;
  SUBCASE("the same key (a hit on the record the killed writer left)") { retried = "the first text"; }
  SUBCASE("another key") { retried = "another text"; }
  io::memory_file_system memory;
  REQUIRE(memory.create_dir("/cache").has_value());
  REQUIRE(memory.sync_dir("/").has_value());
  const io::memory_file_system_state initial = memory.snapshot();
  io::fault_injecting_file_system faulty(memory);
  const auto workload = [](io::file_system& fs) { return cache_insert(fs, "the first text"); };
  REQUIRE(workload(faulty));
  const std::uint64_t images = killed_writer::kill_at_every_operation(
      memory, initial, faulty, 3004, workload,
      [&](io::memory_file_system& m, const std::string& where) -> std::optional<std::string> {
        if (!cache_insert(m, retried)) {
          FAIL_CHECK(where << ": insert again failed");
          return std::nullopt;
        }
        return retried;
      },
      [](io::memory_file_system& m, const std::string& text, const std::string& image) {
        crash_support::image_expectations expect(image);
        auto cache = agdb::embedding_cache::open(m, "/cache", cache_profile);
        if (!expect(cache.has_value(), "the cache does not open")) return;
        const auto row = cache->find(cache->key_of(text));
        expect(row.has_value() && std::vector<float>(row->begin(), row->end()) == vector_of(text),
               "the vector of \"" + text + "\", acknowledged as stored, is gone");
      });
  MESSAGE("power-loss images checked: " << images);
  CHECK(images >= 10);
}

}  // namespace agdb_killed_writer_test
