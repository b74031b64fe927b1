// The blob index: sealed sorted runs with a fanout, the in-memory tail, the
// manifest, merging, and loading damaged index files.
#include "turns/turn_test_support.hpp"

namespace turns_blob_index_test {

using namespace turns_test;

namespace {

blob_hash hash_of(std::uint64_t i) { return sha256(std::to_string(i)); }

blob_location location_of(std::uint64_t i) {
  return {file_header_size + i * 100, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i / 2), 1};
}

constexpr std::uint64_t pack_end = file_header_size + 1'000'000;

store_salt salt_of(std::uint8_t v) {
  store_salt s;
  s.fill(v);
  return s;
}

}  // namespace

TEST_CASE("blob index: fanout bits grow with the run and stop at 16") {
  CHECK(turns::detail::fanout_bits_for(0) == 0);
  CHECK(turns::detail::fanout_bits_for(1) == 0);
  CHECK(turns::detail::fanout_bits_for(2) == 1);
  CHECK(turns::detail::fanout_bits_for(1000) == 9);
  CHECK(turns::detail::fanout_bits_for(std::uint64_t{1} << 40) == 16);
}

TEST_CASE("blob index: seal, merge and find; reload from the manifest") {
  io::memory_file_system fs;
  require_ok(fs.create_dir("store"));
  const store_salt salt = salt_of(7);
  blob_index index;
  std::uint64_t added = 0;
  for (int round = 0; round < 6; ++round) {
    std::uint64_t batch = 50 + static_cast<std::uint64_t>(round) * 37;
    for (std::uint64_t i = 0; i < batch; ++i, ++added) index.add(hash_of(added), location_of(added));
    CHECK(index.tail_size() == batch);
    require_ok(index.seal(fs, "store", salt, pack_end));
    CHECK(index.tail_size() == 0);
  }
  CHECK(index.size() == added);
  CHECK(index.run_count() <= 3);  // merged while the older run is at most twice the newer
  for (std::uint64_t i = 0; i < added; ++i) {
    auto found = index.find(hash_of(i));
    REQUIRE(found);
    CHECK(*found == location_of(i));
  }
  CHECK_FALSE(index.find(hash_of(added + 1)));
  // Only the listed runs remain on disk.
  std::size_t run_files = 0;
  for (const auto& name : require_value(fs.list_dir("store"))) run_files += name.rfind("blobs.idx.", 0) == 0;
  CHECK(run_files == index.run_count());

  std::string problem;
  blob_index loaded = require_value(blob_index::load(fs, "store", salt, pack_end, &problem));
  CHECK(problem.empty());
  CHECK(loaded.covered_end() == pack_end);
  CHECK(loaded.size() == added);
  for (std::uint64_t i = 0; i < added; i += 7) CHECK(loaded.find(hash_of(i)) == location_of(i));
  // The tail answers before the runs do.
  loaded.add(hash_of(999'999), location_of(3));
  CHECK(loaded.find(hash_of(999'999)) == location_of(3));
}

TEST_CASE("blob index: a missing manifest is an empty index; damaged files are reported and ignored") {
  io::memory_file_system fs;
  require_ok(fs.create_dir("store"));
  const store_salt salt = salt_of(9);
  blob_index empty = require_value(blob_index::load(fs, "store", salt, pack_end));
  CHECK(empty.size() == 0);
  CHECK(empty.covered_end() == file_header_size);

  blob_index index;
  for (std::uint64_t i = 0; i < 300; ++i) index.add(hash_of(i), location_of(i));
  require_ok(index.seal(fs, "store", salt, pack_end));
  const auto manifest = require_value(fs.read_whole("store/blobs.idx"));
  const auto run = require_value(fs.read_whole("store/blobs.idx.1"));

  struct damage_case {
    const char* name;
    std::function<void()> damage;
    std::uint64_t pack_size;
    store_salt salt;
  };
  auto rewrite = [&](const char* file, std::vector<std::byte> bytes) { require_ok(fs.write_whole(file, bytes)); };
  auto flipped = [](std::vector<std::byte> bytes, std::size_t at) {
    bytes[at] ^= std::byte{0x01};
    return bytes;
  };
  // Rewrites a run with a valid CRC after `edit`, so that only the semantic checks can catch it.
  auto resealed = [&](std::function<void(std::vector<std::byte>&)> edit) {
    std::vector<std::byte> bytes = run;
    edit(bytes);
    store_u32(bytes.data() + bytes.size() - 4,
              crc32(std::span<const std::byte>(bytes).subspan(file_header_size, bytes.size() - file_header_size - 4)));
    return bytes;
  };
  const std::size_t fanout_at = file_header_size + 16;
  const std::size_t hashes_at = fanout_at + 4 * (std::size_t{1} << turns::detail::fanout_bits_for(300));
  const std::size_t entries_at = hashes_at + 300 * 32;
  const damage_case cases[] = {
      {"manifest checksum", [&] { rewrite("store/blobs.idx", flipped(manifest, file_header_size + 3)); }, pack_end, salt},
      {"manifest truncated",
       [&] { rewrite("store/blobs.idx", std::vector<std::byte>(manifest.begin(), manifest.end() - 1)); }, pack_end, salt},
      {"manifest of another store", [] {}, pack_end, salt_of(1)},
      {"manifest covers more than the pack", [] {}, pack_end - 1, salt},
      {"run missing", [&] { require_ok(fs.remove("store/blobs.idx.1")); }, pack_end, salt},
      {"run checksum", [&] { rewrite("store/blobs.idx.1", flipped(run, hashes_at + 5)); }, pack_end, salt},
      {"run truncated", [&] { rewrite("store/blobs.idx.1", std::vector<std::byte>(run.begin(), run.end() - 20)); },
       pack_end, salt},
      {"run count differs from the manifest",
       [&] { rewrite("store/blobs.idx.1", resealed([](auto& b) { store_u64(b.data() + file_header_size, 299); })); },
       pack_end, salt},
      {"run fanout bits out of range",
       [&] { rewrite("store/blobs.idx.1", resealed([](auto& b) { store_u32(b.data() + file_header_size + 8, 17); })); },
       pack_end, salt},
      {"run fanout not monotonic",
       [&] { rewrite("store/blobs.idx.1", resealed([&](auto& b) { store_u32(b.data() + fanout_at, 299); })); },
       pack_end, salt},
      {"run hashes out of order",
       [&] {
         rewrite("store/blobs.idx.1", resealed([&](auto& b) {
                   std::swap_ranges(b.begin() + static_cast<std::ptrdiff_t>(hashes_at),
                                    b.begin() + static_cast<std::ptrdiff_t>(hashes_at + 32),
                                    b.begin() + static_cast<std::ptrdiff_t>(hashes_at + 32));
                 }));
       },
       pack_end, salt},
      {"run location outside the pack",
       [&] { rewrite("store/blobs.idx.1", resealed([&](auto& b) { store_u64(b.data() + entries_at, pack_end); })); },
       pack_end, salt},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    require_ok(fs.write_whole("store/blobs.idx", manifest));
    require_ok(fs.write_whole("store/blobs.idx.1", run));
    c.damage();
    std::string problem;
    blob_index loaded = require_value(blob_index::load(fs, "store", c.salt, c.pack_size, &problem));
    CHECK_FALSE(problem.empty());
    CHECK(loaded.size() == 0);
    CHECK(loaded.covered_end() == file_header_size);
  }
}

}  // namespace turns_blob_index_test
