// fuzz/relay_import_fuzz.cpp: libFuzzer target for `relay import`, which
// reads a Relay export (NDJSON, relay/export.hpp) from anywhere: a backup, a
// pipe from another host, a file someone edited.
//
// The first byte chooses the target store and the reading: bit 0 set, a
// store that already holds a project "p" with a package, a current fact and
// an ended one whose key has no current fact (so imports meet conflicts,
// duplicates and archived projects when bit 2 is set too); bit 1 set, import_options::allow_incomplete. The rest is the
// export, or bare wire objects (another implementation's backup: its first
// line a package, fact, session or project object). import_ndjson() must
// never crash, and:
//   - refused, the error is invalid_argument, already_exists or archived,
//     one line, and nothing was written (the store holds the records it
//     held);
//   - accepted, the store's own export imports into an empty store, whose
//     export is the same text (the round trip is a fixed point), no package
//     is quarantined, importing the same input again writes nothing, and a
//     reader opening the store sees the writer's export;
//   - read piece by piece (read_import_input with an import_reader, in
//     pieces of sizes the first byte's other bits choose, and read ahead
//     whole or for a line or three, the import reading on), into a store of
//     the same state, it gives the same result: the same error, or the same
//     report and the same export.
// A broken rule traps (__builtin_trap), so libFuzzer keeps the input.
//
// Seeds: fuzz/seeds/relay_import_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target relay_import_fuzz
//   build-fuzz/fuzz/relay_import_fuzz -dict=fuzz/relay_import_fuzz.dict corpus/ fuzz/seeds/relay_import_fuzz/
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/relay/export.hpp"
#include "agentctx/relay/store.hpp"
#include "relay_fuzz_support.hpp"

namespace {

namespace relay = agentctx::relay;
namespace io = agentctx::io;
using agentctx::errc;

using relay_fuzz::options;
using relay_fuzz::require;

// The export of every project of `s`, which must succeed and leave nothing out.
std::string exported(const relay::store& s) {
  std::string text;
  auto report = relay::export_ndjson(s, "", text);
  require(report.has_value());
  require(report->left_out.empty());
  return text;
}

void seed(relay::store& s, bool archived) {
  require(s.deposit_json(R"({"package_id":"pkg_f","project_id":"p","relay_version":"0.1","title":"t",)"
                         R"("status":"draft","package_type":"standard","review_type":"none",)"
                         R"("created_at":"2026-04-18T20:00:00Z","created_by":{"id":"j","type":"human"}})")
              .has_value());
  relay::fact_assertion fact;
  fact.project_id = "p";
  fact.subject = "s";
  fact.predicate = "status";
  fact.value = "green";
  fact.valid_from = "2026-04-18T20:00:00Z";
  fact.asserted_by = relay::actor{"j", relay::actor_type::human, std::nullopt};
  require(s.assert_fact(fact).has_value());
  // A fact from elsewhere that ends in 2099, its key (s2) with no current
  // fact: an export that cuts it must name a fact it adds.
  require(relay::import_ndjson(s, R"({"fact_id":"fact_e","project_id":"p","subject":"s2","predicate":"status",)"
                                  R"("value":"E","valid_from":"2026-01-01T00:00:00Z","valid_to":"2099-01-01T00:00:00Z",)"
                                  R"("created_at":"2026-01-01T00:00:00Z"})"
                                  "\n")
              .has_value());
  if (archived) require(s.set_archived("p", true).has_value());
}

bool same_report(const relay::import_report& a, const relay::import_report& b) {
  return a.projects == b.projects && a.sessions == b.sessions && a.packages == b.packages &&
         a.status_changes == b.status_changes && a.facts == b.facts && a.skipped == b.skipped &&
         a.incomplete == b.incomplete && a.cut_line == b.cut_line && a.wire_objects == b.wire_objects &&
         a.differing_projects == b.differing_projects;
}

// The import of `text` read piece by piece, pieces of 1 to 8 bytes or
// larger ones, varying as `pattern` says, into a store in the state `seeded`
// and `archived` say; it must match `report` (and `after`, the export
// the import of the text left).
void check_read_in_pieces(std::string_view text, std::uint8_t pattern, bool seeded, bool archived,
                          relay::import_options read, const agentctx::result<relay::import_report>& report,
                          const std::string& after) {
  io::memory_file_system fs;
  auto store = relay::store::open(fs, "/r", options(false));
  require(store.has_value());
  if (seeded) seed(*store, archived);
  const std::size_t held = store->record_count();
  std::size_t at = 0;
  std::size_t turn = 0;
  const relay::import_reader reader = [&](std::span<char> buffer) -> agentctx::result<std::size_t> {
    const std::size_t piece = (pattern & 1) != 0 ? 1 + (turn++ * 7 + pattern) % 8 : 4093;
    const std::size_t n = std::min({piece, buffer.size(), text.size() - at});
    std::memcpy(buffer.data(), text.data() + at, n);
    at += n;
    return n;
  };
  // Read ahead whole, or only a line or three, the import reading on.
  relay::read_ahead_limits limits;
  if ((pattern & 2) != 0) limits.lines = 1 + (pattern >> 2) % 3;
  auto streamed = relay::import_ndjson(*store, relay::read_import_input(reader, limits), read);
  require(streamed.has_value() == report.has_value());
  if (!streamed) {
    require(streamed.error().code == report.error().code && streamed.error().message == report.error().message);
    require(store->record_count() == held);
    return;
  }
  require(same_report(*streamed, *report));
  require(exported(*store) == after);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool seeded = (data[0] & 1) != 0;
  relay::import_options read;
  read.allow_incomplete = (data[0] & 2) != 0;

  io::memory_file_system fs;
  auto store = relay::store::open(fs, "/r", options(false));
  require(store.has_value());
  if (seeded) seed(*store, (data[0] & 4) != 0);
  const std::size_t held = store->record_count();

  auto report = relay::import_ndjson(*store, text, read);
  if (!report) {
    const agentctx::error& e = report.error();
    require(e.code == errc::invalid_argument || e.code == errc::already_exists || e.code == errc::archived);
    require(!e.message.empty() && e.message.find('\n') == std::string::npos);
    require(store->record_count() == held);
    check_read_in_pieces(text, static_cast<std::uint8_t>(data[0] >> 3), seeded, (data[0] & 4) != 0, read, report, {});
    return 0;
  }
  const std::string after = exported(*store);
  check_read_in_pieces(text, static_cast<std::uint8_t>(data[0] >> 3), seeded, (data[0] & 4) != 0, read, report, after);

  // Importing the same input again changes nothing.
  auto again = relay::import_ndjson(*store, text, read);
  require(again.has_value());
  require(store->record_count() == held + report->projects + report->sessions + report->packages +
                                       report->status_changes + report->facts);
  require(again->projects + again->sessions + again->packages + again->status_changes + again->facts == 0);
  require(exported(*store) == after);

  // The store's export restores into an empty store as the same export.
  io::memory_file_system other;
  auto copy = relay::store::open(other, "/copy", options(false));
  require(copy.has_value());
  require(relay::import_ndjson(*copy, after).has_value());
  require(copy->quarantined().empty());
  require(exported(*copy) == after);

  // A reader replaying the log sees what the writer holds.
  auto reader = relay::store::open(fs, "/r", options(true));
  require(reader.has_value());
  require(reader->quarantined().empty());
  require(exported(*reader) == after);
  return 0;
}
