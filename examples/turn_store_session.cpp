// A C++ agent keeping its conversation in a turn store (seed 002):
//   example_turn_store_session [STORE_DIR]
// creates the store if needed, records a short session, branches it to try
// an alternative answer, pages back through history and prints the counts.
#include <cstdio>
#include <string>
#include <string_view>

#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/turns/turn_store.hpp"

namespace turns = agentctx::turns;

namespace {

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

int fail(const agentctx::error& e) {
  std::fprintf(stderr, "example: %s\n", e.describe().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  agentctx::io::posix_file_system fs;
  const std::string dir = argc > 1 ? argv[1] : "example-turn-store";
  if (auto created = turns::turn_store::init(fs, dir); !created && created.error().code != agentctx::errc::already_exists) {
    return fail(created.error());
  }
  auto store = turns::turn_store::open(fs, dir);
  if (!store) return fail(store.error());

  // Type tags and codec tags are the caller's own: here 1 = user, 2 = assistant, codec 1 = JSON.
  auto ctx = (*store)->create_context();
  if (!ctx) return fail(ctx.error());
  const char* session[] = {
      R"({"role":"user","content":"Summarise the failing test."})",
      R"({"role":"assistant","content":"test_turns fails in the crash suite at image 412."})",
      R"({"role":"user","content":"Which file?"})",
  };
  turns::turn_id last = 0;
  for (std::size_t i = 0; i < std::size(session); ++i) {
    turns::append_options options;
    options.type_tag = i % 2 == 0 ? 1 : 2;
    options.codec = 1;
    auto id = (*store)->append(ctx->id, bytes_of(session[i]), options);  // durable when it returns
    if (!id) return fail(id.error());
    last = *id;
  }

  // Branch from the assistant's answer to try another one: O(1), nothing copied.
  auto branch = (*store)->fork(last - 1);
  if (!branch) return fail(branch.error());
  turns::append_options assistant;
  assistant.type_tag = 2;
  assistant.codec = 1;
  if (auto id = (*store)->append(branch->id, bytes_of(R"({"role":"assistant","content":"Let me rerun it first."})"),
                                 assistant);
      !id) {
    return fail(id.error());
  }

  // The last two turns of each line, oldest first, with their payloads.
  for (auto context : {ctx->id, branch->id}) {
    auto page = (*store)->last(context, 2);
    if (!page) return fail(page.error());
    std::printf("context %s (head depth %u):\n", turns::to_hex_id(context).c_str(), page->head_depth);
    for (const turns::turn& t : page->turns) {
      auto payload = (*store)->read_payload(t);
      if (!payload) return fail(payload.error());
      std::printf("  turn %llu (parent %llu): %.*s\n", static_cast<unsigned long long>(t.id),
                  static_cast<unsigned long long>(t.parent), static_cast<int>(payload->size()),
                  reinterpret_cast<const char*>(payload->data()));
    }
  }
  auto stats = (*store)->stats();
  if (!stats) return fail(stats.error());
  std::printf("%llu turns in %llu contexts, %llu distinct payloads, dedup ratio %.2f\n",
              static_cast<unsigned long long>(stats->turns), static_cast<unsigned long long>(stats->contexts),
              static_cast<unsigned long long>(stats->blobs), stats->dedup_ratio());
  return 0;
}
