// The LRU of decompressed payloads.
#include "agentctx/turns/detail/blob_cache.hpp"
#include "turns/turn_test_support.hpp"

namespace turns_blob_cache_test {

using namespace turns_test;

namespace {

turns::detail::blob_cache::payload bytes_of_size(std::size_t n) {
  return std::make_shared<const std::vector<std::byte>>(n, std::byte{7});
}

}  // namespace

TEST_CASE("blob cache: least recently used payloads go first; the byte budget holds") {
  turns::detail::blob_cache cache(1000);
  const blob_hash a = sha256("a"), b = sha256("b"), c = sha256("c"), d = sha256("d");
  cache.insert(a, bytes_of_size(240));
  cache.insert(b, bytes_of_size(240));
  cache.insert(c, bytes_of_size(240));
  REQUIRE(cache.find(a));  // a is now the most recent
  cache.insert(d, bytes_of_size(240));  // 960 bytes: all fit
  CHECK(cache.find(b));
  cache.insert(sha256("e"), bytes_of_size(240));  // over budget: the least recent (c) goes
  CHECK_FALSE(cache.find(c));
  CHECK(cache.find(a));
  CHECK(cache.find(d));
  CHECK(cache.find(a)->size() == 240);
  // More than a quarter of the budget is never kept.
  cache.insert(sha256("big"), bytes_of_size(251));
  CHECK_FALSE(cache.find(sha256("big")));
  cache.clear();
  CHECK_FALSE(cache.find(a));
}

TEST_CASE("blob cache: capacity 0 keeps nothing, and the store reads without it") {
  turns::detail::blob_cache off(0);
  off.insert(sha256("a"), bytes_of_size(1));
  CHECK_FALSE(off.find(sha256("a")));

  io::memory_file_system fs;
  store_options options = test_options();
  options.blob_cache_bytes = 0;
  auto store = fresh_store(fs, "store", options);
  context_head ctx = require_value(store->create_context());
  turn_id id = require_value(store->append(ctx.id, payload(5)));
  for (int i = 0; i < 3; ++i) CHECK(require_value(store->read_payload(require_value(store->get_turn(id)))) == payload(5));
}

}  // namespace turns_blob_cache_test
