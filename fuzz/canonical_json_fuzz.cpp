// fuzz/canonical_json_fuzz.cpp: libFuzzer target for canonical JSON
// (agentctx/json/canonical.hpp), whose bytes content hashes are computed over:
// any text may arrive in a package to deposit or verify.
//
// The input is JSON text. For both canonical forms (relay and jcs):
//   - canonicalize(x) either succeeds or refuses with invalid_value or
//     invalid_utf8 and a message; relay refuses exactly when jcs refuses
//     (the forms differ in order and nulls, not in what they accept);
//   - json::parse(x) succeeds exactly when canonicalize(x) does;
//   - when it succeeds:
//       the canonical text is valid UTF-8 and parses again;
//       canonicalize(canonical text) succeeds and is byte-identical
//       (idempotence);
//       serialize(parse(x)) is byte-identical to canonicalize(x) (a
//       differential test: canonicalize parses the text itself in one pass,
//       json/detail/canonical_text.hpp, while parse reads it with simdjson),
//       and so are the pieces serialize_to gives, joined;
//       its objects' members are in the form's order with no name twice,
//       and the relay form has no member whose value is null;
//       the jcs text parses to the same tree as x (numbers read back to the
//       same double, strings unchanged), the relay text to that tree without
//       its null members;
//       a fresh canonicalizer writes the same bytes as the one reused across
//       inputs.
// Nothing may crash, leak, hang or trip a sanitizer. A broken rule traps
// (__builtin_trap), so libFuzzer keeps the input.
//
// Seeds: fuzz/seeds/canonical_json_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target canonical_json_fuzz
//   build-fuzz/fuzz/canonical_json_fuzz -dict=fuzz/canonical_json_fuzz.dict corpus/ fuzz/seeds/canonical_json_fuzz/
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "agentctx/core/error.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/json/canonical.hpp"
#include "agentctx/json/value.hpp"

namespace {

namespace json = agentctx::json;
using agentctx::errc;
using json::canonical_form;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

// Members in the form's strict order (so no name twice) and, in the relay
// form, no member whose value is null; all the way down.
void require_canonical_tree(const json::value& node, canonical_form form) {
  if (node.is_array()) {
    for (const json::value& item : node.as_array()) require_canonical_tree(item, form);
  } else if (node.is_object()) {
    const json::value::object_type& members = node.as_object();
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i > 0) require(json::name_less(members[i - 1].first, members[i].first, form));
      if (form == canonical_form::relay) require(!members[i].second.is_null());
      require_canonical_tree(members[i].second, form);
    }
  }
}

// `node` without the members whose value is null (nulls in arrays stay).
json::value without_null_members(const json::value& node) {
  if (node.is_array()) {
    json::value::array_type items;
    for (const json::value& item : node.as_array()) items.push_back(without_null_members(item));
    return json::value(std::move(items));
  }
  if (node.is_object()) {
    json::value::object_type members;
    for (const json::value::member& m : node.as_object()) {
      if (!m.second.is_null()) members.emplace_back(m.first, without_null_members(m.second));
    }
    return json::value(std::move(members));
  }
  return node;
}

// Reused across inputs, as a server would reuse them.
json::canonicalizer& first() {
  static json::canonicalizer c;
  return c;
}
json::canonicalizer& second() {
  static json::canonicalizer c;
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto tree = second().parse(text);
  if (!tree) {
    require(tree.error().code == errc::invalid_value || tree.error().code == errc::invalid_utf8);
    require(!tree.error().message.empty());
  }

  std::optional<bool> accepted;
  for (const canonical_form form : {canonical_form::relay, canonical_form::jcs}) {
    auto canonical_view = first().canonicalize(text, form);
    if (accepted) require(*accepted == canonical_view.has_value());
    accepted = canonical_view.has_value();
    require(tree.has_value() == canonical_view.has_value());
    if (!canonical_view) {
      require(canonical_view.error().code == errc::invalid_value || canonical_view.error().code == errc::invalid_utf8);
      require(!canonical_view.error().message.empty());
      continue;
    }
    const std::string canonical(*canonical_view);  // the view dies with the next call on first()
    require(agentctx::is_valid_utf8(canonical));

    // Idempotence.
    auto again = first().canonicalize(canonical, form);
    require(again.has_value());
    require(*again == canonical);

    // The tree path writes the same bytes.
    auto serialized = second().serialize(*tree, form);
    require(serialized.has_value());
    require(*serialized == canonical);
    std::string pieces;
    require(second().serialize_to(*tree, form, [&](std::string_view piece) { pieces += piece; }).has_value());
    require(pieces == canonical);

    // Order, nulls, and the same data.
    auto reparsed = second().parse(canonical);
    require(reparsed.has_value());
    require_canonical_tree(*reparsed, form);
    if (form == canonical_form::jcs) {
      require(*reparsed == *tree);
    } else {
      require(*reparsed == without_null_members(*tree));
    }

    // No state carried over from earlier inputs.
    auto fresh = json::canonicalize(text, form);
    require(fresh.has_value());
    require(*fresh == canonical);
  }
  return 0;
}
