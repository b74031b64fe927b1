// embedding_cache and caching_embedder: lookups, persistence, damaged files,
// concurrent writers and crashes at every file-system operation.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agentctx/agdb/caching_embedder.hpp"
#include "agentctx/agdb/embedding_cache.hpp"
#include "agentctx/agdb/embedding_cache_key.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/core/endian.hpp"
#include "io/io_test_support.hpp"
#include "support/result_checks.hpp"

namespace agdb_embedding_cache_test {

using agentctx::errc;
using agentctx::result;
using namespace agentctx::agdb;
using agentctx::io::crash_mode;
using agentctx::io::fault_injecting_file_system;
using agentctx::io::memory_file_system;

namespace {

constexpr std::uint32_t dim = 4;
const std::string directory = "/cache";
const embedding_profile profile{"test", "model", std::nullopt, dim, "none"};

embedding_cache open_or_fail(agentctx::io::file_system& fs, const embedding_profile& p = profile) {
  auto cache = embedding_cache::open(fs, directory, p);
  REQUIRE_MESSAGE(cache.has_value(), test_support::error_text(cache));
  return std::move(*cache);
}

// A vector that differs for every text.
std::vector<float> vector_of(std::string_view text) {
  std::vector<float> v(dim);
  for (std::size_t i = 0; i < dim; ++i) v[i] = static_cast<float>(text.size() * 10 + i) + 0.25f;
  if (!text.empty()) v[0] += static_cast<float>(static_cast<unsigned char>(text[0]));
  return v;
}

void insert_or_fail(embedding_cache& cache, const std::vector<std::string>& texts) {
  std::vector<embedding_cache_digest> keys;
  std::vector<float> rows;
  for (const std::string& text : texts) {
    keys.push_back(cache.key_of(text));
    const std::vector<float> v = vector_of(text);
    rows.insert(rows.end(), v.begin(), v.end());
  }
  auto inserted = cache.insert(keys, rows);
  REQUIRE_MESSAGE(inserted.has_value(), test_support::error_text(inserted));
}

// Every text is cached with its vector.
void check_cached(const embedding_cache& cache, const std::vector<std::string>& texts) {
  for (const std::string& text : texts) {
    CAPTURE(text);
    const auto row = cache.find(cache.key_of(text));
    REQUIRE(row.has_value());
    CHECK(std::vector<float>(row->begin(), row->end()) == vector_of(text));
  }
}

std::string cache_path() { return directory + "/" + embedding_cache::file_name(profile); }

std::size_t header_size() { return 20 + cache_key_profile_json(profile).size() + 4; }
constexpr std::size_t record_size = 32 + 4 * dim + 4;

// A memory file system holding a cache with the texts "a", "bb", "ccc".
const std::vector<std::string> three = {"a", "bb", "ccc"};
void make_three(memory_file_system& fs) {
  embedding_cache cache = open_or_fail(fs);
  insert_or_fail(cache, three);
}

// A counting embedder: how many calls and texts reached it.
class counting_embedder final : public embedder {
 public:
  explicit counting_embedder(std::uint32_t d) : inner_(d) {}
  const embedding_profile& profile() const override { return inner_.profile(); }
  result<void> embed(std::span<const std::string_view> texts, std::span<float> out) override {
    ++calls;
    seen.insert(seen.end(), texts.begin(), texts.end());
    return inner_.embed(texts, out);
  }
  std::size_t calls = 0;
  std::vector<std::string> seen;

 private:
  hash_embedder inner_;
};

}  // namespace

TEST_CASE("embedding_cache: keys are embedding_cache_key() as bytes; the file is named after the profile") {
  memory_file_system fs;
  embedding_cache cache = open_or_fail(fs);
  const auto key = cache.key_of("hello world");
  CHECK(agentctx::to_hex(key) == embedding_cache_key(profile, "hello world"));
  CHECK(parse_embedding_cache_key(embedding_cache_key(profile, "hello world")).value() == key);
  CHECK(parse_embedding_cache_key("ABCDEF" + std::string(58, '0')).value()[0] == 0xAB);
  CHECK(parse_embedding_cache_key("abc").error().code == errc::invalid_argument);
  CHECK(parse_embedding_cache_key(std::string(63, '0') + "g").error().code == errc::invalid_argument);

  const std::string name = embedding_cache::file_name(profile);
  CHECK(name == agentctx::to_hex(agentctx::sha256(cache_key_profile_json(profile))) + ".embedding-cache");
  CHECK(name != embedding_cache::file_name(hash_embedding_profile(dim)));
  CHECK(cache.path() == directory + "/" + name);
  CHECK(cache.size() == 0);
  CHECK_FALSE(cache.find(key).has_value());
}

TEST_CASE("embedding_cache: the worked example of docs/format/embedding-cache.md, byte for byte") {
  memory_file_system fs;
  const embedding_profile hash2 = hash_embedding_profile(2);
  auto cache = embedding_cache::open(fs, directory, hash2);
  REQUIRE(cache.has_value());
  CHECK(embedding_cache::file_name(hash2) ==
        "1588351e661a88512438d8a8aea1208e65ca5a9cccb1ea2164dab8d539db5a20.embedding-cache");
  const auto key = cache->key_of("hello");
  const std::vector<float> hello = {0.0f, 1.0f};
  std::vector<float> embedded(2);
  const std::vector<std::string_view> texts = {"hello"};
  REQUIRE(hash_embedder(2).embed(texts, embedded).has_value());
  CHECK(embedded == hello);
  REQUIRE(cache->insert(std::span(&key, 1), hello).has_value());

  const std::string expected_hex =
      "4147454341434845010000000200000052000000"
      "7b2276223a322c226261636b656e64223a2268617368222c226d6f64656c223a6e756c6c2c227265766973696f6e223a6e756c6c"
      "2c2264696d223a322c226f75747075745f6e6f726d223a226e6f6e65227d"
      "071b542f"
      "bbf2d311a102acb0257d9f74fab538deb326d5188f6c14642ceffd841e889593"
      "000000000000803f"
      "2a29299f";
  const std::string bytes = io_test::whole(fs, cache->path());
  CHECK(bytes.size() == 150);
  CHECK(agentctx::to_hex(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size())) ==
        expected_hex);
}

TEST_CASE("embedding_cache: inserted vectors are found, survive reopening, and are stored once") {
  memory_file_system fs;
  {
    embedding_cache cache = open_or_fail(fs);
    insert_or_fail(cache, {"a", "bb"});
    insert_or_fail(cache, {"bb", "ccc", "ccc"});  // "bb" is known; "ccc" twice is stored once
    CHECK(cache.size() == 3);
    check_cached(cache, three);
  }
  CHECK(fs.file_size(cache_path()).value() == header_size() + 3 * record_size);
  embedding_cache reopened = open_or_fail(fs);
  CHECK(reopened.size() == 3);
  check_cached(reopened, three);

  // Inserting only known keys writes nothing.
  insert_or_fail(reopened, {"a"});
  CHECK(fs.file_size(cache_path()).value() == header_size() + 3 * record_size);

  std::vector<float> too_few(3);
  const auto key = reopened.key_of("x");
  CHECK(reopened.insert(std::span(&key, 1), too_few).error().code == errc::invalid_argument);
  CHECK(embedding_cache::open(fs, directory, embedding_profile{"test", std::nullopt, std::nullopt, 0, "none"})
            .error()
            .code == errc::invalid_argument);
}

// Opening writes nothing: the directory and the file are made by the first
// insert, so a cache nothing was inserted into leaves nothing behind.
TEST_CASE("embedding_cache: the directory and the file are made by the first insert, not by open") {
  memory_file_system fs;
  {
    embedding_cache cache = open_or_fail(fs);
    CHECK(cache.size() == 0);
    CHECK_FALSE(fs.exists(directory).value());
    CHECK_FALSE(cache.find(cache.key_of("a")).has_value());
  }
  CHECK_FALSE(fs.exists(directory).value());
  REQUIRE(fs.create_dir(directory).has_value());
  {
    embedding_cache cache = open_or_fail(fs);
    CHECK(fs.list_dir(directory).value().empty());
    insert_or_fail(cache, {"a"});
  }
  CHECK(fs.file_size(cache_path()).value() == header_size() + record_size);
  REQUIRE(fs.remove(cache_path()).has_value());
  REQUIRE(fs.remove_dir(directory).has_value());
  {
    embedding_cache cache = open_or_fail(fs);
    insert_or_fail(cache, {"a", "bb"});
  }
  CHECK(open_or_fail(fs).size() == 2);
  // A directory removed after open (rm -r beside a running server) is made
  // again by the next insert.
  REQUIRE(fs.remove(cache_path()).has_value());
  REQUIRE(fs.remove_dir(directory).has_value());
  {
    embedding_cache cache = open_or_fail(fs);
    REQUIRE(fs.create_dir(directory).has_value());
    embedding_cache second = open_or_fail(fs);  // opened while the directory is there
    REQUIRE(fs.remove_dir(directory).has_value());
    insert_or_fail(second, {"a"});
    insert_or_fail(cache, {"bb"});
  }
  CHECK(open_or_fail(fs).size() == 2);
  // The folder the directory would be made in must exist.
  auto orphan = embedding_cache::open(fs, "/missing/cache", profile);
  REQUIRE_FALSE(orphan.has_value());
  CHECK(orphan.error().code == errc::not_found);
  CHECK(orphan.error().path == "/missing/cache");
}

TEST_CASE("embedding_cache: damaged files") {
  struct damage_case {
    std::string name;
    std::function<void(std::string&)> damage;
    std::optional<errc> open_error;  // else: opens with `loaded` records
    std::uint64_t error_offset = 0;
    std::size_t loaded = 0;
  };
  const std::size_t header = header_size();
  const auto put_u32 = [](std::string& bytes, std::size_t at, std::uint32_t value) {
    agentctx::store_u32(bytes.data() + at, value);
  };
  const std::vector<damage_case> cases = {
      {"intact", [](std::string&) {}, std::nullopt, 0, 3},
      {"bad magic", [](std::string& b) { b[0] = 'X'; }, errc::bad_magic, 0, 0},
      {"wrong version", [&](std::string& b) { put_u32(b, 8, 2); }, errc::unsupported_version, 8, 0},
      {"wrong dim", [&](std::string& b) { put_u32(b, 12, 8); }, errc::incompatible, 12, 0},
      {"another profile", [](std::string& b) { b[30] ^= 0x01; }, errc::incompatible, 16, 0},
      {"header checksum", [&](std::string& b) { b[header - 1] ^= 0x40; }, errc::checksum_mismatch, header - 4, 0},
      {"torn record", [&](std::string& b) { b.resize(header + 2 * record_size + 7); }, std::nullopt, 0, 2},
      {"torn checksum", [&](std::string& b) { b.resize(header + 3 * record_size - 1); }, std::nullopt, 0, 2},
      {"record checksum mismatch", [&](std::string& b) { b[header + record_size + 40] ^= 0x01; }, std::nullopt, 0, 1},
      {"damaged key", [&](std::string& b) { b[header + 3] ^= 0x10; }, std::nullopt, 0, 0},
      {"garbage tail", [](std::string& b) { b += std::string(100, '\x7f'); }, std::nullopt, 0, 3},
      {"header only", [&](std::string& b) { b.resize(header); }, std::nullopt, 0, 0},
      {"torn header", [&](std::string& b) { b.resize(header - 5); }, std::nullopt, 0, 0},
      {"torn magic", [](std::string& b) { b.resize(3); }, std::nullopt, 0, 0},
      {"empty file", [](std::string& b) { b.clear(); }, std::nullopt, 0, 0},
      {"zeros", [](std::string& b) { b.assign(b.size(), '\0'); }, std::nullopt, 0, 0},
  };
  for (const damage_case& c : cases) {
    CAPTURE(c.name);
    memory_file_system fs;
    make_three(fs);
    std::string bytes = io_test::whole(fs, cache_path());
    c.damage(bytes);
    REQUIRE(fs.write_whole(cache_path(), bytes).has_value());

    auto cache = embedding_cache::open(fs, directory, profile);
    if (c.open_error) {
      REQUIRE_FALSE(cache.has_value());
      CHECK(cache.error().code == *c.open_error);
      CHECK(cache.error().path == cache_path());
      CHECK(cache.error().offset == c.error_offset);
      continue;
    }
    REQUIRE_MESSAGE(cache.has_value(), test_support::error_text(cache));
    CHECK(cache->size() == c.loaded);
    check_cached(*cache, std::vector<std::string>(three.begin(), three.begin() + static_cast<std::ptrdiff_t>(c.loaded)));

    // The next insert drops the damaged tail (or rewrites a missing header)
    // and stores what was lost again after the intact records.
    insert_or_fail(*cache, {"dddd"});
    insert_or_fail(*cache, three);
    embedding_cache reopened = open_or_fail(fs);
    CHECK(reopened.size() == 4);
    check_cached(reopened, {"a", "bb", "ccc", "dddd"});
    CHECK(fs.file_size(cache_path()).value() == header + 4 * record_size);
  }
}

TEST_CASE("embedding_cache: a cache file of another profile is refused, naming the file") {
  memory_file_system fs;
  make_three(fs);
  const embedding_profile other{"test", "model", std::string("v2"), dim, "none"};
  // Someone renamed the file of `profile` to the name of `other`'s.
  REQUIRE(fs.rename(cache_path(), directory + "/" + embedding_cache::file_name(other)).has_value());
  auto cache = embedding_cache::open(fs, directory, other);
  REQUIRE_FALSE(cache.has_value());
  CHECK(cache.error().code == errc::incompatible);
  CHECK(cache.error().describe().find(embedding_cache::file_name(other)) != std::string::npos);
}

TEST_CASE("embedding_cache: writers sharing a file lose nothing") {
  memory_file_system fs;
  embedding_cache first = open_or_fail(fs);
  embedding_cache second = open_or_fail(fs);
  insert_or_fail(first, {"a", "bb"});
  insert_or_fail(second, {"bb", "ccc"});  // learns first's records before appending
  CHECK(second.size() == 3);
  insert_or_fail(first, {"dddd"});
  CHECK(first.size() == 4);
  embedding_cache reopened = open_or_fail(fs);
  CHECK(reopened.size() == 4);
  check_cached(reopened, {"a", "bb", "ccc", "dddd"});
  CHECK(fs.file_size(cache_path()).value() == header_size() + 4 * record_size);

  // Threads with a cache object each, as processes would have.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&fs, t] {
      auto cache = embedding_cache::open(fs, directory, profile);
      if (!cache) return;
      for (int i = 0; i < 25; ++i) {
        const std::string text = "thread " + std::to_string(t) + " text " + std::to_string(i);
        const auto key = cache->key_of(text);
        (void)cache->insert(std::span(&key, 1), vector_of(text));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  embedding_cache after = open_or_fail(fs);
  CHECK(after.size() == 4 + 4 * 25);
  for (int t = 0; t < 4; ++t) check_cached(after, {"thread " + std::to_string(t) + " text 24"});
}

TEST_CASE("embedding_cache: a crash at any operation leaves a cache that opens and keeps every completed insert") {
  // The workload: two inserts into a new cache, then one more after reopening.
  const std::vector<std::vector<std::string>> batches = {{"a", "bb"}, {"ccc"}, {"dddd", "a"}};
  const auto workload = [&](agentctx::io::file_system& fs, std::size_t& completed) -> bool {
    for (std::size_t b = 0; b < batches.size(); ++b) {
      auto cache = embedding_cache::open(fs, directory, profile);
      if (!cache) return false;
      std::vector<embedding_cache_digest> keys;
      std::vector<float> rows;
      for (const std::string& text : batches[b]) {
        keys.push_back(cache->key_of(text));
        const std::vector<float> v = vector_of(text);
        rows.insert(rows.end(), v.begin(), v.end());
      }
      if (!cache->insert(keys, rows)) return false;
      completed = b + 1;
    }
    return true;
  };

  memory_file_system memory;
  REQUIRE(memory.sync_dir("/").has_value());
  const auto initial = memory.snapshot();
  fault_injecting_file_system faulty(memory);
  std::size_t completed = 0;
  REQUIRE(workload(faulty, completed));
  const std::uint64_t total = faulty.operation_count();
  CHECK(total >= 6);

  const std::vector<crash_mode> crash_modes = {crash_mode::drop_unsynced(), crash_mode::keep_all_unsynced(),
                                               crash_mode::keep_prefix_torn(1, 10),
                                               crash_mode::keep_prefix_torn(1, record_size + 5)};
  for (std::uint64_t n = 1; n <= total + 1; ++n) {
    for (std::size_t m = 0; m < crash_modes.size(); ++m) {
      CAPTURE(n);
      CAPTURE(m);
      memory.restore(initial);
      faulty.reset();
      faulty.set_crash_after_fault(true);
      if (n <= total) faulty.fail_operation(n);
      completed = 0;
      workload(faulty, completed);
      memory.simulate_crash(crash_modes[m]);

      auto cache = embedding_cache::open(memory, directory, profile);
      REQUIRE_MESSAGE(cache.has_value(), test_support::error_text(cache));
      for (std::size_t b = 0; b < completed; ++b) check_cached(*cache, batches[b]);
      // Whatever else survived is intact, and the cache accepts new records.
      for (const std::string text : {"a", "bb", "ccc", "dddd"}) {
        if (const auto row = cache->find(cache->key_of(text))) {
          CHECK(std::vector<float>(row->begin(), row->end()) == vector_of(text));
        }
      }
      insert_or_fail(*cache, {"eeeee"});
      embedding_cache reopened = open_or_fail(memory);
      check_cached(reopened, {"eeeee"});
      for (std::size_t b = 0; b < completed; ++b) check_cached(reopened, batches[b]);
    }
  }
}

TEST_CASE("embedding_cache: on the real disk") {
  io_test::temporary_directory dir;
  agentctx::io::posix_file_system posix;
  const std::string cache_directory = dir.path() + "/embeddings";
  {
    auto cache = embedding_cache::open(posix, cache_directory, profile);
    REQUIRE_MESSAGE(cache.has_value(), test_support::error_text(cache));
    insert_or_fail(*cache, three);
  }
  auto reopened = embedding_cache::open(posix, cache_directory, profile);
  REQUIRE(reopened.has_value());
  check_cached(*reopened, three);
  CHECK(std::filesystem::file_size(cache_directory + "/" + embedding_cache::file_name(profile)) ==
        header_size() + 3 * record_size);
}

// What insert() could not make is refused by open(), before any embedding:
// an empty name, a file where the directory (or its folder) should be, a
// missing folder. A name with trailing slashes, and one whose folder is "."
// (the root of a confined file system), are fine.
TEST_CASE("embedding_cache: open refuses a directory insert() could not make, and accepts the rest") {
  io_test::temporary_directory dir;
  agentctx::io::posix_file_system posix;
  const auto code_of_open = [&](agentctx::io::file_system& fs, const std::string& d) {
    auto cache = embedding_cache::open(fs, d, profile);
    return cache ? errc::ok : cache.error().code;
  };
  const std::string file = dir.path() + "/afile";
  REQUIRE(std::filesystem::exists(dir.path()));
  { std::ofstream(file) << "x"; }
  CHECK(code_of_open(posix, "") == errc::invalid_argument);
  CHECK(code_of_open(posix, file) == errc::io_error);             // ENOTDIR
  CHECK(code_of_open(posix, file + "/cache") == errc::io_error);  // its folder is a file
  CHECK(embedding_cache::open(posix, file, profile).error().describe().find("not a directory") != std::string::npos);
  CHECK(code_of_open(posix, dir.path() + "/missing/cache") == errc::not_found);
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/missing"));
  for (const std::string slashes : {"/", "//"}) {
    CAPTURE(slashes);
    const std::string folder = dir.path() + "/slashed" + std::to_string(slashes.size());
    auto cache = embedding_cache::open(posix, folder + slashes, profile);
    REQUIRE_MESSAGE(cache.has_value(), test_support::error_text(cache));
    CHECK_FALSE(std::filesystem::exists(folder));
    insert_or_fail(*cache, three);
    CHECK(cache->path() == folder + "/" + embedding_cache::file_name(profile));
    check_cached(test_support::require_value(embedding_cache::open(posix, folder, profile)), three);
  }
  // Relative to the root of a confined file system: the folder is ".".
  auto confined = test_support::require_value(agentctx::io::confined_file_system::open(std::filesystem::canonical(dir.path()).string()));
  {
    auto cache = embedding_cache::open(*confined, "emb", profile);
    REQUIRE_MESSAGE(cache.has_value(), test_support::error_text(cache));
    insert_or_fail(*cache, three);
  }
  check_cached(test_support::require_value(embedding_cache::open(*confined, "emb", profile)), three);
  CHECK(std::filesystem::is_directory(dir.path() + "/emb"));
  // The root itself (no "./" before the file's name, which it refuses).
  {
    auto cache = embedding_cache::open(*confined, ".", profile);
    REQUIRE_MESSAGE(cache.has_value(), test_support::error_text(cache));
    CHECK(cache->path() == embedding_cache::file_name(profile));
    insert_or_fail(*cache, three);
  }
  check_cached(test_support::require_value(embedding_cache::open(*confined, ".", profile)), three);
  CHECK(std::filesystem::exists(dir.path() + "/" + embedding_cache::file_name(profile)));
}

TEST_CASE("embedding_cache: processes appending to one file on the real disk lose nothing") {
  io_test::temporary_directory dir;
  const std::string cache_directory = dir.path() + "/embeddings";
  constexpr int processes = 3;
  constexpr int texts_each = 20;
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      agentctx::io::posix_file_system posix;
      auto cache = embedding_cache::open(posix, cache_directory, profile);
      if (!cache) ::_exit(1);
      for (int i = 0; i < texts_each; ++i) {
        const std::string text = "process " + std::to_string(p) + " text " + std::to_string(i);
        const auto key = cache->key_of(text);
        if (!cache->insert(std::span(&key, 1), vector_of(text))) ::_exit(2);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  agentctx::io::posix_file_system posix;
  auto cache = embedding_cache::open(posix, cache_directory, profile);
  REQUIRE(cache.has_value());
  CHECK(cache->size() == processes * texts_each);
  for (int p = 0; p < processes; ++p) {
    for (int i = 0; i < texts_each; ++i) check_cached(*cache, {"process " + std::to_string(p) + " text " + std::to_string(i)});
  }
  CHECK(std::filesystem::file_size(cache->path()) == header_size() + processes * texts_each * record_size);
}

TEST_CASE("caching_embedder: embeds only misses, once each, in one batch") {
  memory_file_system fs;
  auto counting = std::make_unique<counting_embedder>(8);
  counting_embedder* inner = counting.get();
  auto cached = caching_embedder::open(std::move(counting), fs, directory);
  REQUIRE_MESSAGE(cached.has_value(), test_support::error_text(cached));
  caching_embedder& embedder = **cached;
  CHECK(embedder.profile() == hash_embedding_profile(8));
  hash_embedder reference(8);

  const auto embed_and_check = [&](const std::vector<std::string_view>& texts) {
    std::vector<float> out(texts.size() * 8);
    auto done = embedder.embed(texts, out);
    REQUIRE_MESSAGE(done.has_value(), test_support::error_text(done));
    std::vector<float> expected(texts.size() * 8);
    REQUIRE(reference.embed(texts, expected).has_value());
    CHECK(out == expected);
  };

  embed_and_check({"alpha beta", "gamma", "alpha beta"});
  CHECK(inner->calls == 1);
  CHECK(inner->seen == std::vector<std::string>{"alpha beta", "gamma"});
  CHECK(embedder.statistics().misses == 2);
  CHECK(embedder.statistics().hits == 1);

  embed_and_check({"gamma", "delta", "alpha beta"});
  CHECK(inner->calls == 2);
  CHECK(inner->seen.back() == "delta");
  CHECK(embedder.statistics().misses == 3);

  embed_and_check({"delta", "gamma"});
  CHECK(inner->calls == 2);  // all hits: the inner embedder is not called
  CHECK(embedder.cache().size() == 3);

  // Another embedder over the same directory starts with everything.
  auto second_counting = std::make_unique<counting_embedder>(8);
  counting_embedder* second_inner = second_counting.get();
  auto second = caching_embedder::open(std::move(second_counting), fs, directory);
  REQUIRE(second.has_value());
  std::vector<float> out(3 * 8);
  const std::vector<std::string_view> texts = {"alpha beta", "gamma", "delta"};
  REQUIRE((*second)->embed(texts, out).has_value());
  CHECK(second_inner->calls == 0);

  std::vector<float> wrong(7);
  CHECK((*second)->embed(texts, wrong).error().code == errc::invalid_argument);
  CHECK(caching_embedder::open(nullptr, fs, directory).error().code == errc::invalid_argument);
}

}  // namespace agdb_embedding_cache_test
