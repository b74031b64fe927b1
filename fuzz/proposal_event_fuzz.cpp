// fuzz/proposal_event_fuzz.cpp: libFuzzer target for the content of
// meta.proposal_event records (agdb::parse_proposal_event), which agents and
// other tools write into delta layers, so it is untrusted.
//
// The parser may not crash, leak or trip a sanitizer; a refusal is
// invalid_value with a message; an accepted event has a context id from 1,
// re-encodes to JSON that parses back to an equal event, and that encoding is
// a fixed point (encode(parse(encode(e))) == encode(e)).
//
// Seeds: fuzz/seeds/proposal_event_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target proposal_event_fuzz
//   build-fuzz/fuzz/proposal_event_fuzz -dict=fuzz/proposal_event_fuzz.dict corpus/ fuzz/seeds/proposal_event_fuzz/
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agentctx/agdb/proposals.hpp"

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view content(reinterpret_cast<const char*>(data), size);
  const auto event = agentctx::agdb::parse_proposal_event(content);
  if (!event) {
    require(event.error().code == agentctx::errc::invalid_value);
    require(!event.error().message.empty());
    return 0;
  }
  require(event->context_id != 0);
  require(!event->proposal_id || *event->proposal_id != 0);
  const std::string encoded = agentctx::agdb::encode_proposal_event(*event);
  const auto again = agentctx::agdb::parse_proposal_event(encoded);
  require(again.has_value());
  // Strings with invalid UTF-8 are written with U+FFFD, so compare encodings.
  require(agentctx::agdb::encode_proposal_event(*again) == encoded);
  return 0;
}
