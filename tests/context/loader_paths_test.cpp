// The context loader on the real disk: modification times, and symlinks
// below the root (never followed: outside_root), with a canary folder that
// must stay exactly as it was.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "agentctx/context/loader.hpp"
#include "agentctx/context/proposals.hpp"
#include "agentctx/io/confined_file_system.hpp"
#include "io/io_test_support.hpp"
#include "support/disk_files.hpp"
#include "support/result_checks.hpp"

namespace context_loader_paths_test {

namespace context = agentctx::context;
namespace fs = std::filesystem;
using agentctx::errc;

using test_support::write_file;

TEST_CASE("the loader on disk: times are real, symlinks are refused, the canary is untouched") {
  io_test::temporary_directory scratch;
  const fs::path top = fs::canonical(scratch.path());
  const fs::path root = top / "photos";
  const fs::path outside = top / "outside";
  write_file(root / "taste.md", "# Taste\n");
  write_file(root / "iguana" / "notes.md", "n\n");
  write_file(outside / "notes.md", "secret\n");
  write_file(outside / "log.jsonl", "{\"summary\":\"secret\"}\n");
  fs::create_directories(root / "evil");
  fs::create_symlink(outside / "notes.md", root / "evil" / "notes.md");
  fs::create_directory_symlink(outside, root / "linked");
  fs::create_symlink("loop", root / "loop");
  const auto canary = test_support::tree_snapshot(outside);

  auto confined = agentctx::io::confined_file_system::open(root.string());
  REQUIRE(confined.has_value());
  context::loader loader(**confined, {});
  auto ok = loader.read_context("iguana");
  REQUIRE_MESSAGE(ok.has_value(), test_support::error_text(ok));
  REQUIRE(ok->taste.last_modified_ms.has_value());
  CHECK(*ok->taste.last_modified_ms > 1'700'000'000'000);
  for (const char* item : {"evil", "linked", "loop"}) {
    CAPTURE(item);
    auto refused = loader.read_context(item);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == errc::outside_root);
    CHECK_FALSE(loader.read_full_notes(item).has_value());
    context::proposal_book book(**confined, {});
    auto proposal = book.propose({.target = "notes", .item_id = item, .mode = "append", .content = "x", .reason = "", .proposed_by = "agent"});
    REQUIRE_FALSE(proposal.has_value());
    CHECK(proposal.error().code == errc::outside_root);
  }
  CHECK(test_support::tree_snapshot(outside) == canary);
}

}  // namespace context_loader_paths_test
