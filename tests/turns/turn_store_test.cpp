// The turn store's operations (seed 002 sections 3, 6.2, 7): contexts,
// appends, forks, paging, replay, blobs and dedup, readers, locking.
#include <set>
#include <thread>

#include "agentctx/io/posix_file_system.hpp"
#include "io/io_test_support.hpp"
#include "turns/turn_test_support.hpp"

namespace turns_turn_store_test {

using namespace turns_test;

TEST_CASE("turn store: init creates an empty store; a second init refuses") {
  io::memory_file_system fs;
  require_ok(turn_store::init(fs, "store", test_options()));
  auto again = turn_store::init(fs, "store", test_options());
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == errc::already_exists);
  auto store = require_value(turn_store::open(fs, "store", test_options()));
  CHECK(store->contexts().empty());
  CHECK(store->last_turn() == 0);
  CHECK(store->recovery().clean());
  auto stats = require_value(store->stats());
  CHECK(stats.turns == 0);
  CHECK(stats.blobs == 0);
  CHECK(stats.dedup_ratio() == 1.0);
}

TEST_CASE("turn store: open of a folder without a store is not_found") {
  io::memory_file_system fs;
  require_ok(fs.create_dir("empty"));
  auto opened = turn_store::open(fs, "empty", test_options());
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().code == errc::not_found);
  auto missing = turn_store::open(fs, "nowhere", test_options());
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);
  // Nothing is left behind in a folder that is not a store.
  CHECK(require_value(fs.list_dir("empty")).empty());
}

TEST_CASE("turn store: init never overwrites the data of a store that lost its heads.log") {
  io::memory_file_system fs;
  {
    auto store = fresh_store(fs);
    (void)require_value(store->append(require_value(store->create_context()).id, payload(1)));
  }
  require_ok(fs.remove("store/heads.log"));
  auto again = turn_store::init(fs, "store", test_options());
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == errc::already_exists);
  CHECK(again.error().message.find("no heads.log") != std::string::npos);
  CHECK(require_value(fs.file_size("store/blobs.pack")) > file_header_size);
}

TEST_CASE("turn store: appends chain on the head; last and before page back to the root") {
  io::memory_file_system fs;
  auto store = fresh_store(fs);
  context_head ctx = require_value(store->create_context());
  CHECK(ctx.id != 0);
  CHECK(ctx.head == 0);
  std::vector<turn_id> ids;
  for (int i = 0; i < 10; ++i) {
    append_options options;
    options.type_tag = 7;
    options.codec = 3;
    ids.push_back(require_value(store->append(ctx.id, payload(i), options)));
  }
  CHECK(ids.front() == 1);
  CHECK(ids.back() == 10);
  context_head head = require_value(store->head(ctx.id));
  CHECK(head.head == 10);
  CHECK(head.depth == 9);

  turn_page page = require_value(store->last(ctx.id, 4));
  REQUIRE(page.turns.size() == 4);
  CHECK(page.turns[0].id == 7);
  CHECK(page.turns[3].id == 10);
  CHECK(page.turns[3].depth == 9);
  CHECK(page.turns[3].type_tag == 7);
  CHECK(page.turns[3].codec == 3);
  CHECK(page.next_cursor == 7);
  CHECK(page.head_depth == 9);
  CHECK(text_of(require_value(store->read_payload(page.turns[0]))) == text_of(payload(6)));

  std::vector<turn_id> seen;
  for (turn_id cursor = page.next_cursor; cursor != 0;) {
    turn_page older = require_value(store->before(ctx.id, cursor, 4));
    REQUIRE_FALSE(older.turns.empty());
    CHECK(older.turns.back().id == cursor - 1);
    for (auto it = older.turns.rbegin(); it != older.turns.rend(); ++it) seen.push_back(it->id);
    cursor = older.next_cursor;
  }
  CHECK(seen == std::vector<turn_id>{6, 5, 4, 3, 2, 1});

  turn_page all = require_value(store->last(ctx.id, 100));
  CHECK(all.turns.size() == 10);
  CHECK(all.next_cursor == 0);
  CHECK(require_value(store->last(ctx.id, 0)).turns.empty());
}

TEST_CASE("turn store: range by depth and replay") {
  io::memory_file_system fs;
  auto store = fresh_store(fs);
  context_head ctx = require_value(store->create_context());
  for (int i = 0; i < 20; ++i) (void)require_value(store->append(ctx.id, payload(i)));
  turn_page window = require_value(store->range(ctx.id, 5, 3));
  REQUIRE(window.turns.size() == 3);
  CHECK(window.turns[0].depth == 5);
  CHECK(window.turns[2].depth == 7);
  CHECK(window.head_depth == 19);
  turn_page tail = require_value(store->range(ctx.id, 18, 10));
  REQUIRE(tail.turns.size() == 2);
  CHECK(tail.turns[1].id == 20);
  CHECK(require_value(store->range(ctx.id, 20, 5)).turns.empty());
  CHECK(require_value(store->range(ctx.id, 0, 0)).turns.empty());
  CHECK(require_value(store->range(ctx.id, 0, 1)).turns.at(0).id == 1);

  std::vector<turn> chain = require_value(store->replay(12));
  REQUIRE(chain.size() == 12);
  for (std::size_t i = 0; i < chain.size(); ++i) {
    CHECK(chain[i].id == i + 1);
    CHECK(chain[i].depth == i);
  }
  CHECK(require_value(store->replay(1)).size() == 1);
  CHECK(store->replay(21).error().code == errc::not_found);
  CHECK(store->get_turn(0).error().code == errc::not_found);
}

TEST_CASE("turn store: fork is O(1) and branches share history; explicit parent rewinds a context") {
  io::memory_file_system fs;
  auto store = fresh_store(fs);
  context_head main = require_value(store->create_context());
  for (int i = 0; i < 5; ++i) (void)require_value(store->append(main.id, payload(i)));
  context_head branch = require_value(store->fork(3));
  CHECK(branch.head == 3);
  CHECK(branch.depth == 2);
  turn_id b1 = require_value(store->append(branch.id, payload(100)));
  CHECK(require_value(store->get_turn(b1)).parent == 3);
  CHECK(require_value(store->get_turn(b1)).depth == 3);
  // The main line is untouched.
  CHECK(require_value(store->head(main.id)).head == 5);
  std::vector<turn> chain = require_value(store->replay(b1));
  REQUIRE(chain.size() == 4);
  CHECK(chain[2].id == 3);
  // create_context with a base is the same as fork.
  context_head based = require_value(store->create_context(2));
  CHECK(based.head == 2);
  CHECK(based.depth == 1);
  // An explicit parent: the context's head moves to the new turn.
  append_options rewind;
  rewind.parent = 1;
  turn_id edited = require_value(store->append(main.id, payload(200), rewind));
  CHECK(require_value(store->head(main.id)).head == edited);
  CHECK(require_value(store->head(main.id)).depth == 1);
  // A root turn in an existing context.
  append_options root;
  root.parent = 0;
  turn_id fresh_root = require_value(store->append(main.id, payload(300), root));
  CHECK(require_value(store->get_turn(fresh_root)).depth == 0);

  CHECK(store->fork(0).error().code == errc::invalid_argument);
  CHECK(store->fork(999).error().code == errc::not_found);
  append_options missing;
  missing.parent = 999;
  CHECK(store->append(main.id, payload(1), missing).error().code == errc::not_found);
  CHECK(store->append(12345, payload(1)).error().code == errc::not_found);
  CHECK(store->head(12345).error().code == errc::not_found);
  CHECK(store->contexts().size() == 3);
}

TEST_CASE("turn store: identical payloads are stored once across contexts") {
  io::memory_file_system fs;
  auto store = fresh_store(fs);
  context_head a = require_value(store->create_context());
  context_head b = require_value(store->create_context());
  auto shared = payload(42, 10'000);
  turn_id t1 = require_value(store->append(a.id, shared));
  std::uint64_t pack_after_first = require_value(fs.file_size("store/blobs.pack"));
  turn_id t2 = require_value(store->append(b.id, shared));
  turn_id t3 = require_value(store->append(a.id, shared));
  CHECK(require_value(fs.file_size("store/blobs.pack")) == pack_after_first);
  CHECK(require_value(store->get_turn(t1)).payload_hash == require_value(store->get_turn(t2)).payload_hash);
  CHECK(require_value(store->get_turn(t3)).payload_hash == require_value(store->get_turn(t1)).payload_hash);
  store_stats stats = require_value(store->stats());
  CHECK(stats.turns == 3);
  CHECK(stats.blobs == 1);
  CHECK(stats.payload_bytes == 30'000);
  CHECK(stats.blob_raw_bytes == 10'000);
  CHECK(stats.dedup_ratio() == doctest::Approx(3.0));
  CHECK(stats.blob_stored_bytes < 10'000);  // the text compresses
  CHECK(stats.contexts == 2);
}

TEST_CASE("turn store: payload codecs: compressible, incompressible, empty, limit") {
  io::memory_file_system fs;
  store_options options = test_options();
  options.max_payload_bytes = 64 * 1024;
  auto store = fresh_store(fs, "store", options);
  context_head ctx = require_value(store->create_context());
  auto text = payload(1, 20'000);
  auto random = noise(2, 20'000);
  std::vector<std::byte> empty;
  turn_id t_text = require_value(store->append(ctx.id, text));
  turn_id t_random = require_value(store->append(ctx.id, random));
  turn_id t_empty = require_value(store->append(ctx.id, empty));
  auto where_text = store->find_blob(require_value(store->get_turn(t_text)).payload_hash);
  auto where_random = store->find_blob(require_value(store->get_turn(t_random)).payload_hash);
  REQUIRE(where_text);
  REQUIRE(where_random);
  CHECK(where_text->codec == static_cast<std::uint16_t>(blob_codec::zstd));
  CHECK(where_text->stored_len < where_text->raw_len);
  CHECK(where_random->codec == static_cast<std::uint16_t>(blob_codec::raw));
  CHECK(where_random->stored_len == 20'000);
  CHECK(require_value(store->read_payload(require_value(store->get_turn(t_text)))) == text);
  CHECK(require_value(store->read_payload(require_value(store->get_turn(t_random)))) == random);
  CHECK(require_value(store->read_payload(require_value(store->get_turn(t_empty)))).empty());
  auto too_big = store->append(ctx.id, noise(3, 64 * 1024 + 1));
  REQUIRE_FALSE(too_big.has_value());
  CHECK(too_big.error().code == errc::invalid_argument);
  blob_hash unknown{};
  CHECK(store->get_blob(unknown).error().code == errc::not_found);
  // The limit is for appends only: a store written with a larger one stays
  // readable (and is not "repaired") by a writer opened with a smaller one.
  store.reset();
  store_options smaller = test_options();
  smaller.max_payload_bytes = 100;
  auto reopened = require_value(turn_store::open(fs, "store", smaller));
  CHECK(reopened->recovery().clean());
  CHECK(reopened->last_turn() == t_empty);
  CHECK(require_value(reopened->read_payload(require_value(reopened->get_turn(t_random)))) == random);
}

TEST_CASE("turn store: everything survives close and reopen; the index is sealed into runs") {
  io::memory_file_system fs;
  store_options options = test_options();
  options.seal_threshold = 16;
  options.checkpoint_interval = 8;
  options.snapshot_threshold = 8;
  std::vector<std::pair<turn_id, std::vector<std::byte>>> written;
  context_id ctx_id = 0;
  {
    auto store = fresh_store(fs, "store", options);
    context_head ctx = require_value(store->create_context());
    ctx_id = ctx.id;
    for (int i = 0; i < 100; ++i) {
      auto bytes = payload(static_cast<std::uint64_t>(i % 70));
      written.emplace_back(require_value(store->append(ctx.id, bytes)), bytes);
    }
    require_ok(store->close());
  }
  auto names = require_value(fs.list_dir("store"));
  CHECK(std::count(names.begin(), names.end(), "blobs.idx") == 1);
  CHECK(std::count(names.begin(), names.end(), "turns.idx") == 1);
  CHECK(std::count(names.begin(), names.end(), "heads.snap") == 1);
  auto store = require_value(turn_store::open(fs, "store", options));
  CHECK(store->recovery().clean());
  CHECK(store->recovery().snapshot_used);
  CHECK(store->recovery().blobs_indexed_from_pack == 0);
  CHECK(require_value(store->head(ctx_id)).head == 100);
  for (const auto& [id, bytes] : written) {
    CHECK(require_value(store->read_payload(require_value(store->get_turn(id)))) == bytes);
  }
  store_stats stats = require_value(store->stats());
  CHECK(stats.blobs == 70);
  CHECK(stats.index_tail == 0);
  CHECK(stats.index_runs >= 1);
  CHECK(stats.index_runs <= 4);
}

TEST_CASE("turn store: a second writer is refused with the holder's pid; readers coexist") {
  io::memory_file_system fs;
  auto writer = fresh_store(fs);
  auto second = turn_store::open(fs, "store", test_options());
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().code == errc::locked);
  CHECK(second.error().message == "store is locked by pid " + std::to_string(::getpid()));

  context_head ctx = require_value(writer->create_context());
  turn_id first = require_value(writer->append(ctx.id, payload(1)));
  store_options read_only = test_options();
  read_only.read_only = true;
  auto reader = require_value(turn_store::open(fs, "store", read_only));
  CHECK(require_value(reader->head(ctx.id)).head == first);
  CHECK(require_value(reader->read_payload(require_value(reader->get_turn(first)))) == payload(1));
  CHECK(reader->append(ctx.id, payload(2)).error().code == errc::unsupported);
  CHECK(reader->create_context().error().code == errc::unsupported);

  // The reader sees new turns after refresh(), and blobs it has not indexed yet.
  turn_id second_turn = require_value(writer->append(ctx.id, payload(2)));
  CHECK(require_value(reader->head(ctx.id)).head == first);
  require_ok(reader->refresh());
  CHECK(require_value(reader->head(ctx.id)).head == second_turn);
  turn_id third = require_value(writer->append(ctx.id, payload(3)));
  auto hash = require_value(writer->get_turn(third)).payload_hash;
  CHECK(require_value(reader->get_blob(hash)) == payload(3));

  writer.reset();
  auto next_writer = turn_store::open(fs, "store", test_options());
  CHECK(next_writer.has_value());
}

TEST_CASE("turn store: wait_for_lock waits for the writer to close") {
  io::memory_file_system fs;
  auto writer = fresh_store(fs);
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    writer.reset();
  });
  store_options waiting = test_options();
  waiting.wait_for_lock = true;
  auto second = turn_store::open(fs, "store", waiting);
  releaser.join();
  CHECK(second.has_value());
}

TEST_CASE("turn store: concurrent appenders share syncs, lose nothing and dedup once") {
  io::memory_file_system memory;
  io::fault_injecting_file_system fs(memory);  // counts syncs
  fs.set_sync_latency(std::chrono::microseconds(300));  // a disk flush takes time; others queue meanwhile
  auto store = fresh_store(fs);
  constexpr int threads = 8;
  constexpr int per_thread = 40;
  std::vector<context_id> contexts;
  for (int i = 0; i < threads; ++i) contexts.push_back(require_value(store->create_context()).id);
  context_id shared_context = require_value(store->create_context()).id;

  // Phase 1: one context per thread; every thread appends the same payloads
  // (dedup under contention) and the threads share syncs.
  std::uint64_t syncs_before = fs.operation_count(io::operation_kind::sync);
  std::vector<std::vector<turn_id>> ids(threads);
  std::vector<std::string> failures(threads);
  auto run = [&](auto body) {
    std::vector<std::thread> workers;
    for (int w = 0; w < threads; ++w) workers.emplace_back(body, w);
    for (auto& t : workers) t.join();
    for (const auto& f : failures) CHECK_MESSAGE(f.empty(), f);
  };
  run([&](int w) {
    for (int i = 0; i < per_thread; ++i) {
      auto own = store->append(contexts[static_cast<std::size_t>(w)], payload(static_cast<std::uint64_t>(i)));
      if (!own) {
        failures[static_cast<std::size_t>(w)] = own.error().describe();
        return;
      }
      ids[static_cast<std::size_t>(w)].push_back(*own);
    }
  });
  std::uint64_t appends = threads * per_thread;
  std::uint64_t syncs = fs.operation_count(io::operation_kind::sync) - syncs_before;
  MESSAGE("syncs for " << appends << " appends from " << threads << " threads: " << syncs);
  // Alone, every append costs two or three syncs (pack when its blob is new,
  // turn log, head log); shared, a batch of appends costs the same.
  CHECK(syncs < appends);

  std::set<turn_id> unique;
  for (int w = 0; w < threads; ++w) {
    // Each context's chain is exactly its thread's appends, in order.
    turn_page page = require_value(store->last(contexts[static_cast<std::size_t>(w)], 1000));
    REQUIRE(page.turns.size() == per_thread);
    for (int i = 0; i < per_thread; ++i) {
      CHECK(page.turns[static_cast<std::size_t>(i)].id == ids[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)]);
      CHECK(page.turns[static_cast<std::size_t>(i)].depth == static_cast<std::uint32_t>(i));
    }
    unique.insert(ids[static_cast<std::size_t>(w)].begin(), ids[static_cast<std::size_t>(w)].end());
  }
  CHECK(unique.size() == appends);
  CHECK(*unique.rbegin() == appends);  // dense ids, none skipped
  CHECK(require_value(store->stats()).blobs == per_thread);

  // Phase 2: every thread appends to one context: one chain, nothing lost.
  fs.set_sync_latency(std::chrono::microseconds(0));
  run([&](int w) {
    for (int i = 0; i < per_thread; ++i) {
      auto shared = store->append(shared_context, payload(static_cast<std::uint64_t>(1000 + w * per_thread + i)));
      if (!shared) {
        failures[static_cast<std::size_t>(w)] = shared.error().describe();
        return;
      }
    }
  });
  turn_page shared = require_value(store->last(shared_context, 10'000));
  CHECK(shared.turns.size() == threads * per_thread);
  for (std::size_t i = 1; i < shared.turns.size(); ++i) CHECK(shared.turns[i].parent == shared.turns[i - 1].id);
  CHECK(require_value(store->stats()).blobs == per_thread + threads * per_thread);
}

TEST_CASE("turn store: works on the real disk") {
  io_test::temporary_directory dir;
  io::posix_file_system fs;
  std::string path = dir.path() + "/store";
  {
    auto store = fresh_store(fs, path);
    context_head ctx = require_value(store->create_context());
    for (int i = 0; i < 50; ++i) (void)require_value(store->append(ctx.id, payload(static_cast<std::uint64_t>(i), 5000)));
    context_head fork = require_value(store->fork(25));
    (void)require_value(store->append(fork.id, payload(7, 5000)));
  }
  auto store = require_value(turn_store::open(fs, path, test_options()));
  CHECK(store->recovery().clean());
  CHECK(store->last_turn() == 51);
  CHECK(store->contexts().size() == 2);
  CHECK(require_value(store->read_payload(require_value(store->get_turn(51)))) == payload(7, 5000));
  store_stats stats = require_value(store->stats());
  CHECK(stats.blobs == 50);
}

TEST_CASE("turn store: a reader refreshing while the writer appends always sees a consistent prefix") {
  io::memory_file_system fs;
  store_options options = test_options();
  options.seal_threshold = 8;  // runs are sealed and merged while the reader reads
  options.checkpoint_interval = 16;
  options.snapshot_threshold = 16;
  auto writer = fresh_store(fs, "store", options);
  context_head ctx = require_value(writer->create_context());
  store_options read_only = test_options();
  read_only.read_only = true;
  auto reader = require_value(turn_store::open(fs, "store", read_only));
  std::atomic<bool> done{false};
  std::string failure;
  std::size_t views = 0;
  std::thread reading([&] {
    while (!done.load() && failure.empty()) {
      auto refreshed = reader->refresh();
      if (!refreshed) {
        failure = "refresh: " + refreshed.error().describe();
        break;
      }
      if (!reader->recovery().index_problem.empty()) failure = "index rebuilt: " + reader->recovery().index_problem;
      auto h = reader->head(ctx.id);
      if (!h) {
        failure = "head: " + h.error().describe();
        break;
      }
      auto page = reader->last(ctx.id, 5);
      if (!page) {
        failure = "last: " + page.error().describe();
        break;
      }
      for (const turn& t : page->turns) {
        auto bytes = reader->read_payload(t);
        if (!bytes || *bytes != payload(t.id)) failure = "payload of turn " + std::to_string(t.id);
      }
      ++views;
    }
  });
  for (std::uint64_t i = 1; i <= 300; ++i) CHECK(require_value(writer->append(ctx.id, payload(i))) == i);
  done = true;
  reading.join();
  CHECK_MESSAGE(failure.empty(), failure);
  MESSAGE("consistent reader views: " << views);
  CHECK(views > 0);
}

}  // namespace turns_turn_store_test
