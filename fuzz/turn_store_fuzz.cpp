// fuzz/turn_store_fuzz.cpp: libFuzzer target for the files of a turn store
// (docs/format/turn-store.md): the three logs that hold the truth and the
// derived files recovery may trust or rebuild.
//
// Input framing. The input is a sequence of frames, each
//     selector u8, length u32 little-endian, bytes[length]
// and the bytes become the file the selector names in the store directory
// "/store" of a memory_file_system (selector modulo 16):
//     0 blobs.pack   1 turns.log   2 heads.log   3 heads.snap   4 blobs.idx
//     5 turns.idx    6..15 the index runs blobs.idx.1 .. blobs.idx.10
// A length past the end of the input takes what is left; a later frame for
// the same file replaces the earlier one. The three logs are created empty
// when the input has no frame for them (an empty file has no valid header,
// so open() fails on it).
//
// For every input, none of which may crash, hang, leak or trip a sanitizer:
//   1. open read-only and walk everything: contexts(), head(), last(),
//      before() page by page to the root, range(), replay() of every head,
//      get_turn() of every id 1..last_turn(), read_payload() of every turn,
//      stats(). Errors are fine; what the calls return must be consistent:
//      get_turn(id) has that id, pages and chains follow parent links and
//      end at the head, paging to the root gives replay()'s chain, a payload
//      hashes to the turn's payload_hash, a head is 0 (depth 0) or a turn
//      <= last_turn(). When the input has no turns.idx, recovery verified
//      every turn and head, so stronger rules hold too: every get_turn() and
//      stats() succeed, depth = parent's depth + 1 along every chain, range()
//      returns exactly the depths asked for, and a head's depth is its
//      turn's;
//   2. open as the writer (recovery applied) and walk again; close;
//   3. open as the writer again: that must succeed, find nothing to cut
//      (recovery is idempotent), and accept a new context with a new turn,
//      a fork of the last turn and a second copy of a stored payload (which
//      must not grow the pack);
//   4. open read-only once more: the new turns and heads are there and read.
// A broken rule traps (__builtin_trap) so that libFuzzer keeps the input.
//
// Seeds: fuzz/seeds/turn_store_fuzz/ holds stores written by the library
// (fixed salt 00 01 .. 0f, fixed clock), in the framing above:
//   empty              init only: the three file headers
//   one_turn           the worked example of docs/format/turn-store.md
//   fork_dedup         5 turns, a fork, a payload stored once for two turns,
//                      a zstd blob; closed (index run, checkpoint, snapshot)
//   sealed_runs        seal_threshold 2: several runs, merged
//   snapshot_tail      snapshot_threshold 4, captured open: head records
//                      after heads.snap, an unsealed index tail
//   torn_tail          captured open, then the pack, turns.log and heads.log
//                      each cut mid-record: recovery cuts all three
//   lost_blob          captured open, only the pack's last blob torn: the
//                      turn naming it is dropped and its head falls back
//                      (a correction record)
//   truth_only         fork_dedup without its derived files
// and the inputs found to break the library, named regression_*:
//   regression_range_cycle  a checkpointed turn that is its own parent and a
//                      head record claiming depth 2^32-1 (CRCs valid): range()
//                      follows the cycle ~4e9 times, a hang, because unlike
//                      walk_back() and replay() it does not check that a
//                      parent is earlier than its child.
// turn_store_fuzz.dict lists the magics, the version and header size, and
// record sizes.
//
// Build and run (clang only):
//   cmake -S . -B build/fuzz -DCMAKE_CXX_COMPILER=clang++ -DAGENTCTX_BUILD_FUZZERS=ON
//   cmake --build build/fuzz --target turn_store_fuzz
//   scripts/fuzz.sh --seconds 60 turn_store_fuzz
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/endian.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/turns/turn_store.hpp"

namespace {

namespace turns = agentctx::turns;
using turns::turn;
using turns::turn_id;
using turns::turn_store;

[[noreturn]] void library_bug() { __builtin_trap(); }
void require(bool condition) {
  if (!condition) library_bug();
}

const std::string directory = "/store";

std::string file_for_selector(std::uint8_t selector) {
  switch (selector % 16) {
    case 0: return std::string(turns::pack_file_name);
    case 1: return std::string(turns::turn_log_file_name);
    case 2: return std::string(turns::head_log_file_name);
    case 3: return std::string(turns::head_snapshot_file_name);
    case 4: return std::string(turns::index_manifest_file_name);
    case 5: return std::string(turns::turn_checkpoint_file_name);
    default: return std::string(turns::index_manifest_file_name) + "." + std::to_string(selector % 16 - 5);
  }
}

/// Writes the framed files of `input` into `fs`; true when turns.idx is one.
bool write_store(agentctx::io::memory_file_system& fs, std::span<const std::byte> input) {
  require(fs.create_dir(directory).has_value());
  for (std::string_view log : {turns::pack_file_name, turns::turn_log_file_name, turns::head_log_file_name}) {
    require(fs.write_whole(directory + "/" + std::string(log), std::span<const std::byte>()).has_value());
  }
  bool has_checkpoint = false;
  while (input.size() >= 5) {
    const auto selector = static_cast<std::uint8_t>(input[0]);
    const std::size_t length = std::min<std::uint64_t>(agentctx::load_u32(input.data() + 1), input.size() - 5);
    const std::string name = file_for_selector(selector);
    has_checkpoint = has_checkpoint || name == turns::turn_checkpoint_file_name;
    require(fs.write_whole(directory + "/" + name, input.subspan(5, length)).has_value());
    input = input.subspan(5 + length);
  }
  return has_checkpoint;
}

turns::store_options options_for(bool read_only) {
  turns::store_options options;
  options.read_only = read_only;
  options.max_payload_bytes = 1 << 16;  // a forged raw_len costs at most 64 KiB to decode
  options.seal_threshold = 4;
  options.snapshot_threshold = 4;
  options.checkpoint_interval = 4;
  options.clock = [] { return std::uint64_t{1'700'000'000'000}; };
  auto state = std::make_shared<std::uint64_t>(0x9E3779B97F4A7C15ull);
  options.random = [state] { return *state = *state * 6364136223846793005ull + 1442695040888963407ull; };
  return options;
}

/// What an open store shows; `strict` when recovery read and verified every
/// turn record and head (the input has no turns.idx, so none was trusted).
struct walker {
  turn_store& store;
  bool strict;

  turn_id last = 0;

  void check_chain(const std::vector<turn>& chain) const {
    for (std::size_t i = 1; i < chain.size(); ++i) {
      require(chain[i].parent == chain[i - 1].id);
      if (strict) require(chain[i].depth == chain[i - 1].depth + 1);
    }
  }

  void check_page(const turns::turn_page& page, const turns::context_head& h, std::size_t limit) const {
    require(page.head == h.head && page.head_depth == h.depth);
    require(page.turns.size() <= limit);
    check_chain(page.turns);
    const turn_id expected_cursor =
        page.turns.empty() || page.turns.front().parent == 0 ? 0 : page.turns.front().id;
    require(page.next_cursor == expected_cursor);
  }

  void walk_context(const turns::context_head& h) const {
    require(h.id != 0);
    require(h.head <= last);
    if (h.head == 0) require(h.depth == 0);
    const auto again = store.head(h.id);
    require(again && *again == h);

    auto chain = store.replay(h.head);
    if (strict) require(chain.has_value());
    if (chain) {
      check_chain(*chain);
      require(chain->empty() == (h.head == 0));
      if (!chain->empty()) {
        require(chain->front().parent == 0 && chain->back().id == h.head);
        if (strict) require(chain->front().depth == 0 && chain->back().depth == h.depth);
      }
    }

    // Page from the head to the root; together the pages are the chain.
    std::vector<turn> paged;
    auto page = store.last(h.id, 3);
    if (strict) require(page.has_value());
    for (std::uint64_t pages = 0; page && pages <= last + 1; ++pages) {
      check_page(*page, h, 3);
      if (pages == 0 && h.head != 0) require(!page->turns.empty() && page->turns.back().id == h.head);
      if (!paged.empty()) require(!page->turns.empty() && page->turns.back().id == paged.front().parent);
      paged.insert(paged.begin(), page->turns.begin(), page->turns.end());
      if (page->next_cursor == 0) {
        if (chain) require(paged == *chain);
        break;
      }
      page = store.before(h.id, page->next_cursor, 3);
      if (strict) require(page.has_value());
    }

    for (const auto& [start, limit] : {std::pair<std::uint32_t, std::size_t>{0, 2}, {h.depth / 2, 3}, {h.depth, 1}}) {
      auto window = store.range(h.id, start, limit);
      if (strict) require(window.has_value());
      if (!window) continue;
      check_page(*window, h, limit);
      if (strict && h.head != 0) {
        const std::uint64_t end = std::min<std::uint64_t>(std::uint64_t{start} + limit, std::uint64_t{h.depth} + 1);
        require(window->turns.size() == (start > h.depth ? 0 : end - start));
        for (std::size_t i = 0; i < window->turns.size(); ++i) require(window->turns[i].depth == start + i);
      }
    }
  }

  void walk() {
    last = store.last_turn();
    const auto contexts = store.contexts();
    for (const auto& h : contexts) walk_context(h);

    require(!store.get_turn(0) && !store.get_turn(last + 1));
    for (turn_id id = 1; id <= last; ++id) {
      auto t = store.get_turn(id);
      if (strict) require(t.has_value());
      if (!t) continue;
      require(t->id == id);
      if (strict) {
        require(t->parent < id && store.find_blob(t->payload_hash).has_value());
        if (t->parent == 0) {
          require(t->depth == 0);
        } else {
          auto parent = store.get_turn(t->parent);
          require(parent && t->depth == parent->depth + 1);
        }
      }
      if (auto payload = store.read_payload(*t)) {
        require(agentctx::sha256(std::span<const std::byte>(*payload)) == t->payload_hash);
        auto location = store.find_blob(t->payload_hash);
        require(location && location->raw_len == payload->size());
      }
    }

    auto stats = store.stats();
    if (strict) require(stats.has_value());
    if (stats) require(stats->turns == last && stats->contexts == contexts.size());
  }
};

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

/// Step 3: a store a writer has opened and closed opens clean and takes appends.
void append_to_recovered_store(agentctx::io::memory_file_system& fs, bool strict) {
  auto opened = turn_store::open(fs, directory, options_for(false));
  require(opened.has_value());
  turn_store& store = **opened;
  const turns::recovery_report& again = store.recovery();
  require(again.pack_cut_bytes == 0 && again.log_cut_bytes == 0 && again.turns_dropped == 0 &&
          again.head_log_cut_bytes == 0 && again.head_records_dropped == 0 && !again.index_rebuilt);

  const turn_id before = store.last_turn();
  const std::string_view text = "a payload only turn_store_fuzz appends";
  auto context = store.create_context();
  require(context.has_value());
  auto id = store.append(context->id, bytes_of(text));
  require(id && *id == before + 1);
  auto head = store.head(context->id);
  require(head && head->head == *id && head->depth == 0);
  auto appended = store.get_turn(*id);
  require(appended && appended->parent == 0 && appended->depth == 0);
  auto payload = store.read_payload(*appended);
  require(payload && std::ranges::equal(*payload, bytes_of(text)));

  // A fork of the last turn of the input, and a second copy of its payload.
  if (before != 0) {
    auto base = store.get_turn(before);
    if (strict) require(base.has_value());
    auto fork = store.fork(before);
    require(fork.has_value() == base.has_value());
    agentctx::result<std::vector<std::byte>> stored = agentctx::unexpected(agentctx::error{});
    if (base) stored = store.read_payload(*base);
    if (stored) {
      const std::string pack_path = directory + "/" + std::string(turns::pack_file_name);
      const std::uint64_t pack_size = fs.file_size(pack_path).value_or(0);
      auto copy = store.append(fork->id, *stored);
      require(copy.has_value());
      auto t = store.get_turn(*copy);
      require(t && t->parent == before && t->depth == base->depth + 1);
      require(fs.file_size(pack_path).value_or(1) == pack_size);
    }
  }
  require(store.close().has_value());

  auto reader = turn_store::open(fs, directory, options_for(true));
  require(reader.has_value());
  require((*reader)->recovery().clean());
  auto reread = (*reader)->head(context->id);
  require(reread && reread->head == *id);
  auto t = (*reader)->get_turn(*id);
  require(t && *t == *appended);
  auto reread_payload = (*reader)->read_payload(*t);
  require(reread_payload && std::ranges::equal(*reread_payload, bytes_of(text)));
  walker{**reader, strict}.walk();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  agentctx::io::memory_file_system fs;
  const bool strict = !write_store(fs, std::as_bytes(std::span(data, size)));

  if (auto reader = turn_store::open(fs, directory, options_for(true))) {
    const auto& r = (*reader)->recovery();
    require(r.turns == (*reader)->last_turn());
    walker{**reader, strict}.walk();
  }

  {
    auto writer = turn_store::open(fs, directory, options_for(false));
    if (!writer) return 0;
    require((*writer)->recovery().applied);
    walker{**writer, strict}.walk();
    (void)(*writer)->close();  // a derived file that cannot be written is retried by the next writer
  }
  append_to_recovered_store(fs, strict);
  return 0;
}
