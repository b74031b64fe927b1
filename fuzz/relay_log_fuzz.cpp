// fuzz/relay_log_fuzz.cpp: libFuzzer target for the Relay store's untrusted
// inputs: a package to deposit (relay/model.hpp validation, content hashing)
// and a whole relay.log to replay (relay/log_format.hpp framing, record
// application in relay/store.hpp).
//
// The first byte chooses the mode:
//   even: the rest is a package's JSON text. deposit_json() into an empty
//         in-memory store succeeds or fails with invalid_argument (the
//         protocol's invalid_schema) and a one-line message; on success the
//         stored hash equals SHA-256 of the canonical form, that form is
//         idempotent, a second deposit of the same text is a no-op, and
//         reopening the store finds the package with the same hash.
//   odd:  the rest follows a valid log header (of format version 1 when
//         the byte's bit 1 is set, else 2) and is opened as relay.log,
//         by a reader and by a writer. Opening succeeds or fails with a data
//         error (corrupt, bad_magic, ...); never a crash. When the writer
//         opens, it can deposit, and a second open sees the same records plus
//         that one, and the header is version 2 after a deposit and as it
//         was without one. salvage_records() accounts for every byte; when open
//         refuses the log, store::repair() succeeds and the store then opens
//         with exactly the records repair kept (and one per project it
//         recreated). A log the reader opens exports, and the export
//         imports into an empty store.
// A broken rule traps (__builtin_trap), so libFuzzer keeps the input.
//
// Seeds: fuzz/seeds/relay_log_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target relay_log_fuzz
//   build-fuzz/fuzz/relay_log_fuzz -dict=fuzz/relay_log_fuzz.dict corpus/ fuzz/seeds/relay_log_fuzz/
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/json/canonical.hpp"
#include "agentctx/relay/export.hpp"
#include "agentctx/relay/hash.hpp"
#include "agentctx/relay/log_format.hpp"
#include "agentctx/relay/store.hpp"
#include "relay_fuzz_support.hpp"

namespace {

namespace relay = agentctx::relay;
namespace json = agentctx::json;
namespace io = agentctx::io;
using agentctx::errc;

using relay_fuzz::options;
using relay_fuzz::require;

const char* const valid_package =
    R"({"package_id":"pkg_f","project_id":"p","relay_version":"0.1","title":"t","status":"complete",)"
    R"("package_type":"standard","review_type":"none","created_at":"2026-04-18T20:00:00Z","created_by":{"id":"j","type":"human"}})";

void fuzz_package(std::string_view text) {
  io::memory_file_system fs;
  std::string hash;
  {
    auto store = relay::store::open(fs, "/r", options(false));
    require(store.has_value());
    auto out = store->deposit_json(text);
    if (!out) {
      require(out.error().code == errc::invalid_argument);
      require(!out.error().message.empty() && out.error().message.find('\n') == std::string::npos);
      return;
    }
    require(out->created);
    const relay::stored_package& p = *out->package;
    hash = p.hash;
    auto canonical = json::serialize(p.package.wire, json::canonical_form::relay);
    require(canonical.has_value());
    require(relay::content_hash_of_canonical(*canonical) == hash);
    auto again = json::canonicalize(*canonical, json::canonical_form::relay);
    require(again.has_value() && *again == *canonical);
    // The same text again: the identical package, no second record (when it
    // carried its own id; a generated id makes it another package).
    if (p.package.wire.find("package_id") != nullptr) {
      auto second = store->deposit_json(text);
      if (second && !second->created) require(second->package->hash == hash);
    }
  }
  auto reader = relay::store::open(fs, "/r", options(true));
  require(reader.has_value());
  require(reader->quarantined().empty());
  bool found = false;
  for (const relay::project* project : reader->projects()) {
    auto packages = reader->packages_of(project->project_id);
    require(packages.has_value());
    for (const relay::stored_package* p : *packages) found = found || p->hash == hash;
  }
  require(found);
}

void fuzz_log(std::string_view body, std::uint32_t version) {
  io::memory_file_system fs;
  require(fs.create_dir("/r").has_value());
  {
    auto file = fs.open("/r/relay.log", io::create_truncate);
    require(file.has_value());
    const std::string bytes = relay::encode_log_header(version) + std::string(body);
    require((*file)->write_at(0, std::as_bytes(std::span(bytes.data(), bytes.size()))).has_value());
    require((*file)->sync().has_value());
  }
  // The salvage scan covers every byte after the header, in order, with
  // records and skipped ranges that do not overlap.
  {
    const std::string bytes = relay::encode_log_header(version) + std::string(body);
    const auto file = std::as_bytes(std::span(bytes.data(), bytes.size()));
    const relay::salvage_scan salvage = relay::salvage_records(file, relay::log_header_size);
    std::uint64_t covered = 0;
    for (const auto& r : salvage.records) covered += relay::record_header_size + r.payload.size();
    for (const auto& k : salvage.skipped) covered += k.length;
    require(covered == bytes.size() - relay::log_header_size);
  }
  auto reader = relay::store::open(fs, "/r", options(true));
  if (!reader) {
    require(agentctx::is_data_error(reader.error().code));
    require(reader.error().message.find('\n') == std::string::npos);
    // repair salvages what open refuses: afterwards the store opens.
    relay::repair_options repair;
    repair.clock = [] { return std::uint64_t{1}; };
    auto repaired = relay::store::repair(fs, "/r", repair);
    require(repaired.has_value());
    require(repaired->needed() && repaired->rewritten);
    auto reopened = relay::store::open(fs, "/r", options(true));
    require(reopened.has_value());
    // Every kept record, plus one per project repair recreated.
    require(reopened->record_count() == repaired->records_kept + repaired->recreated.size());
    return;
  }
  {
    // What a reader reads can be exported, and the export imports into an
    // empty store (docs/format/relay-store.md: what canonical JSON reads).
    std::string exported;
    require(relay::export_ndjson(*reader, "", exported).has_value());
    io::memory_file_system other;
    auto copy = relay::store::open(other, "/c", options(false));
    require(copy.has_value());
    require(relay::import_ndjson(*copy, exported).has_value());
  }
  std::size_t records = 0;
  {
    auto writer = relay::store::open(fs, "/r", options(false));
    require(writer.has_value() == reader.has_value());
    if (!writer) return;
    require(writer->record_count() == reader->record_count());
    auto out = writer->deposit_json(valid_package);
    if (out) records = writer->record_count();
    else require(out.error().code == errc::already_exists || out.error().code == errc::archived);
  }
  auto again = relay::store::open(fs, "/r", options(true));
  require(again.has_value());
  if (records != 0) require(again->record_count() == records);
  auto log = fs.map("/r/relay.log");
  require(log.has_value() && log->size() >= relay::log_header_size);
  require(agentctx::load_u32(log->data() + 8) == (records != 0 ? relay::log_format_version : version));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    fuzz_package(rest);
  } else {
    fuzz_log(rest, (data[0] & 2) != 0 ? 1 : 2);
  }
  return 0;
}
