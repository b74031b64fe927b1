// Output formatting shared by the ctxstore subcommands: a turn as one text
// line or a JSON object, a context likewise, and the listing of turns that
// last, before, range and replay print.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/base64.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/json/writer.hpp"
#include "agentctx/turns/turn_store.hpp"
#include "ctxstore/command.hpp"

namespace ctxstore {

/// Hex digits of a hash shown in text output (the JSON has all 64).
inline constexpr std::size_t hash_prefix_digits = 12;

/// The payload size of `t`, or nullopt when its blob is not in the index.
inline std::optional<std::uint32_t> payload_size(const turns::turn_store& store, const turns::turn& t) {
  const auto where = store.find_blob(t.payload_hash);
  if (!where) return std::nullopt;
  return where->raw_len;
}

/// "turn 3 parent 2 depth 2 type 0 codec 0 size 11 sha256 2cf24dba5fb0 2025-12-12T10:11:12.123Z"
inline std::string describe_turn(const turns::turn_store& store, const turns::turn& t) {
  const auto size = payload_size(store, t);
  return "turn " + std::to_string(t.id) + " parent " + std::to_string(t.parent) + " depth " + std::to_string(t.depth) +
         " type " + std::to_string(t.type_tag) + " codec " + std::to_string(t.codec) + " size " +
         (size ? std::to_string(*size) : std::string("?")) + " sha256 " +
         agentctx::to_hex(t.payload_hash).substr(0, hash_prefix_digits) + " " +
         agentctx::format_rfc3339_utc_ms(t.created_at_unix_ms);
}

/// Writes `value`, or null when there is none.
template <class T>
void write_or_null(agentctx::json::writer& w, const std::optional<T>& value) {
  if (value) {
    w.value(*value);
  } else {
    w.value(nullptr);
  }
}

/// The members "created_at" (RFC 3339 UTC, milliseconds) and "created_at_unix_ms".
inline void write_created_at(agentctx::json::writer& w, std::uint64_t unix_ms) {
  w.key("created_at").value(agentctx::format_rfc3339_utc_ms(unix_ms));
  w.key("created_at_unix_ms").value(unix_ms);
}

/// A turn as a JSON object; with `payload`, its bytes under "payload_base64".
inline void write_turn_json(agentctx::json::writer& w, const turns::turn_store& store, const turns::turn& t,
                            const std::vector<std::byte>* payload = nullptr) {
  w.begin_object();
  const std::pair<std::string_view, std::uint64_t> numbers[] = {
      {"id", t.id}, {"parent", t.parent}, {"depth", t.depth}, {"type", t.type_tag}, {"codec", t.codec}, {"flags", t.flags},
  };
  for (const auto& [name, number] : numbers) w.key(name).value(number);
  w.key("size");
  write_or_null(w, payload_size(store, t));
  w.key("hash").value(agentctx::to_hex(t.payload_hash));
  write_created_at(w, t.created_at_unix_ms);
  if (payload) w.key("payload_base64").value(agentctx::base64_encode(*payload));
  w.end_object();
}

/// "0123456789abcdef head 5 depth 4 created 2025-12-12T10:11:12.123Z"
inline std::string describe_context(const turns::context_head& h) {
  return turns::to_hex_id(h.id) + " head " + std::to_string(h.head) + " depth " + std::to_string(h.depth) +
         " created " + agentctx::format_rfc3339_utc_ms(h.created_at_unix_ms);
}

/// A context as a JSON object; the id as a string of 16 hex digits.
inline void write_context_json(agentctx::json::writer& w, const turns::context_head& h) {
  w.begin_object();
  w.key("id").value(turns::to_hex_id(h.id));
  w.key("head").value(h.head);
  w.key("depth").value(h.depth);
  write_created_at(w, h.created_at_unix_ms);
  w.end_object();
}

/// Prints the one JSON document `write` makes, and a newline.
inline int print_json(const std::function<void(agentctx::json::writer&)>& write) {
  std::string out;
  agentctx::json::writer w(out, agentctx::json::layout::pretty);
  write(w);
  std::cout << out << '\n';
  return exit_ok;
}

/// Prints a context create or fork made: its JSON object, or
/// "<verb> context ID (empty)" / "<verb> context ID at turn N (depth D)".
inline int print_new_context(const common_options& o, const agentctx::result<turns::context_head>& made,
                             std::string_view verb) {
  if (!made) return report_error(made.error());
  if (o.json) return print_json([&](agentctx::json::writer& w) { write_context_json(w, *made); });
  std::cout << verb << " context " << turns::to_hex_id(made->id)
            << (made->head == 0 ? std::string(" (empty)")
                                : " at turn " + std::to_string(made->head) + " (depth " + std::to_string(made->depth) + ")")
            << '\n';
  return exit_ok;
}

/// The options of the commands that list turns (last, before, range, replay).
struct listing_options : common_options {
  bool payloads = false;
};

inline void add_listing_options(CLI::App& sub, listing_options& o) {
  add_common_options(sub, o);
  sub.add_flag("--payloads", o.payloads,
               "Include each turn's payload: its bytes after the turn's line, or payload_base64 in JSON");
}

/// How a listing is framed: members written before "turns" in JSON, and
/// lines before and after the turns in text.
struct listing_frame {
  std::function<void(agentctx::json::writer&)> json_members;
  std::string text_header;  ///< without newline; nothing when empty
  std::string text_footer;
};

/// Prints `turns`, oldest first: in text one line per turn (with --payloads
/// followed by the payload's bytes as they are and a newline), in JSON an
/// object with the frame's members and "turns". Payloads are read (and
/// verified against their hashes) before anything is printed, so a damaged
/// blob leaves stdout empty.
inline int print_turns(const turns::turn_store& store, const std::vector<turns::turn>& list,
                       const listing_options& o, const listing_frame& frame) {
  std::vector<std::vector<std::byte>> payloads;
  if (o.payloads) {
    payloads.reserve(list.size());
    for (const turns::turn& t : list) {
      auto bytes = store.read_payload(t);
      if (!bytes) return report_error(bytes.error());
      payloads.push_back(std::move(*bytes));
    }
  }
  if (o.json) {
    return print_json([&](agentctx::json::writer& w) {
      w.begin_object();
      if (frame.json_members) frame.json_members(w);
      w.key("turns").begin_array();
      for (std::size_t i = 0; i < list.size(); ++i) write_turn_json(w, store, list[i], o.payloads ? &payloads[i] : nullptr);
      w.end_array();
      w.end_object();
    });
  }
  if (!frame.text_header.empty()) std::cout << frame.text_header << '\n';
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::cout << describe_turn(store, list[i]) << '\n';
    if (o.payloads) {
      std::cout.write(reinterpret_cast<const char*>(payloads[i].data()), static_cast<std::streamsize>(payloads[i].size()));
      std::cout << '\n';
    }
  }
  if (!frame.text_footer.empty()) std::cout << frame.text_footer << '\n';
  std::cout.flush();
  if (!std::cout) return agentctx_cli::output_failure(program_name);
  return exit_ok;
}

/// The options of last, before and range: a listing of one context's turns.
struct page_options : listing_options {
  turns::context_id context = 0;
  std::size_t count = 64;
};

inline void add_page_options(CLI::App& sub, page_options& o) {
  add_listing_options(sub, o);
  sub.add_option("--context", o.context, "The context (its id: 16 hex digits)")->required()->transform(context_number);
  sub.add_option("-n,--count", o.count, "How many turns at the most")->transform(count_number)->capture_default_str();
}

/// Prints a page of a context's turns: in JSON with "context", "head",
/// "head_depth" and "next_cursor"; in text between a line naming the context
/// and its head and a line with the next cursor (0: the root was reached).
inline int print_page(const turns::turn_store& store, const page_options& o,
                      const agentctx::result<turns::turn_page>& page) {
  if (!page) return report_error(page.error());
  listing_frame frame;
  frame.json_members = [&](agentctx::json::writer& w) {
    w.key("context").value(turns::to_hex_id(o.context));
    w.key("head").value(page->head);
    w.key("head_depth").value(page->head_depth);
    w.key("next_cursor").value(page->next_cursor);
  };
  frame.text_header = "context " + turns::to_hex_id(o.context) +
                      (page->head == 0 ? std::string(": empty")
                                       : ": head turn " + std::to_string(page->head) + " at depth " +
                                             std::to_string(page->head_depth)) +
                      ", " + count_of(page->turns.size(), "turn") + " here";
  frame.text_footer = "next cursor " + std::to_string(page->next_cursor) +
                      (page->next_cursor == 0 ? " (nothing before these turns)" : "");
  return print_turns(store, page->turns, o, frame);
}

}  // namespace ctxstore
