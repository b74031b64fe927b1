// agentctx/agdb/proposals.hpp: proposals, human review and promotion
// (seed 000 sections 11.2, 15.4 and 15.5).
//
// All review state lives in the delta layer, as append-only chunks of kind
// "meta.proposal_event" (no sidecar files, seed 000 section 11.2). Each event's
// content is one compact JSON object (docs/review.md):
//
//   {"action":"propose","context_id":1234,"from_path":"AGENTS.delta.db",
//    "to_path":"AGENTS.user.db","created_at_unix_ms":...,"actor":"mcp"}
//   {"action":"accept"|"reject","proposal_id":77,"context_id":1234,
//    "created_at_unix_ms":...,"actor":"alice","reason":...,"outcome":...}
//
// The field names are those the reference implementation writes, so each
// tool reads the other's events. A proposal's id is the chunk id of its
// propose event; its sources hold the proposed chunk id. "from_path" and
// "to_path" are labels only: no file path is ever taken from chunk content;
// the files are always the ones the caller names.
//
// The state of every proposal (pending, accepted, rejected; by whom, when,
// why) is the fold of the events in file order (fold_proposals). An event
// that cannot be read, or a decision on an unknown or already decided
// proposal, is skipped with a warning: the first decision stands.
//
// Operations (each under the layer locks, in the order delta then user, and
// all-or-nothing: every id is checked before anything is written):
//   propose_promotion  an agent proposes a delta chunk for the user layer;
//   promote_chunks     a human copies delta chunks into the user layer
//                      (`agentsdb promote --ids`), accepting any pending
//                      proposal of each chunk;
//   accept_proposals   the same, named by proposal ids;
//   reject_proposals   a human declines proposals, with a reason.
// A promoted chunk keeps its id (the user copy overrides the delta copy,
// seed 000 section 6.2), gets author "human", keeps its sources plus one
// chunk-id source naming itself in the delta layer (provenance), and its
// embedding row. An id the user layer already holds with equal content is
// left alone ("unchanged"); with other content the request fails unless
// `supersede` is set, which replaces that user record in place. The user
// layer is written first and the decisions second, so a crash in between
// leaves chunks promoted but undecided, and repeating the command finishes
// the job (the chunks are then unchanged). The delta's chunks are never
// changed: decisions are appended.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_update.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::agdb {

inline constexpr std::string_view proposal_event_kind = "meta.proposal_event";

enum class proposal_action { propose, accept, reject };

inline std::string_view action_name(proposal_action action) noexcept {
  switch (action) {
    case proposal_action::accept: return "accept";
    case proposal_action::reject: return "reject";
    case proposal_action::propose: break;
  }
  return "propose";
}

/// One meta.proposal_event record, as its JSON content says.
struct proposal_event {
  proposal_action action = proposal_action::propose;
  std::optional<std::uint32_t> proposal_id;  ///< decisions: the proposal decided
  std::uint32_t context_id = 0;              ///< the proposed chunk
  std::optional<std::string> from_path;      ///< a label such as "AGENTS.delta.db"
  std::optional<std::string> to_path;        ///< a label such as "AGENTS.user.db"
  std::optional<std::uint64_t> created_at_unix_ms;
  std::optional<std::string> actor;
  std::optional<std::string> title, why, what, where;  ///< optional context of a proposal
  std::optional<std::string> reason;                   ///< why a decision was taken
  std::optional<std::string> outcome;                  ///< what an accept did
  friend bool operator==(const proposal_event&, const proposal_event&) = default;
};

/// The event as compact JSON (members in the order of the file comment,
/// absent optionals omitted).
inline std::string encode_proposal_event(const proposal_event& e) {
  std::string out;
  json::writer j(out);
  j.begin_object();
  j.key("action").value(action_name(e.action));
  if (e.proposal_id) j.key("proposal_id").value(std::uint64_t{*e.proposal_id});
  j.key("context_id").value(std::uint64_t{e.context_id});
  const auto optional_text = [&](std::string_view key, const std::optional<std::string>& text) {
    if (text) j.key(key).value(*text);
  };
  optional_text("from_path", e.from_path);
  optional_text("to_path", e.to_path);
  if (e.created_at_unix_ms) j.key("created_at_unix_ms").value(*e.created_at_unix_ms);
  optional_text("actor", e.actor);
  optional_text("title", e.title);
  optional_text("why", e.why);
  optional_text("what", e.what);
  optional_text("where", e.where);
  optional_text("reason", e.reason);
  optional_text("outcome", e.outcome);
  j.end_object();
  return out;
}

/// Reads an event's content. Members this library does not know are
/// ignored; null means absent. Errors (invalid_value, naming the member):
/// not a JSON object; action not "propose", "accept" or "reject"; context_id
/// missing or not an integer in 1..2^32-1; proposal_id not such an integer;
/// created_at_unix_ms not an unsigned integer; a text member not a string.
inline result<proposal_event> parse_proposal_event(std::string_view content) {
  const auto invalid = [](std::string message) { return fail(errc::invalid_value, std::move(message)); };
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (const auto problem = parser.parse(content.data(), content.size()).get(root); problem != simdjson::SUCCESS) {
    return invalid(std::string("not JSON: ") + simdjson::error_message(problem));
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) return invalid("not a JSON object");

  const auto member = [&](std::string_view key) -> std::optional<simdjson::dom::element> {
    simdjson::dom::element value;
    if (object.at_key(key).get(value) != simdjson::SUCCESS || value.is_null()) return std::nullopt;
    return value;
  };
  const auto id_member = [&](std::string_view key) -> result<std::optional<std::uint32_t>> {
    const auto value = member(key);
    if (!value) return std::optional<std::uint32_t>();
    std::uint64_t number = 0;
    if (value->get_uint64().get(number) != simdjson::SUCCESS || number == 0 || number > 0xFFFFFFFFu) {
      return invalid(std::string(key) + " is not a chunk id (an integer from 1 to 4294967295)");
    }
    return std::optional<std::uint32_t>(static_cast<std::uint32_t>(number));
  };
  const auto text_member = [&](std::string_view key, std::optional<std::string>& out) -> result<void> {
    const auto value = member(key);
    if (!value) return {};
    std::string_view text;
    if (value->get_string().get(text) != simdjson::SUCCESS) return invalid(std::string(key) + " is not a string");
    out = std::string(text);
    return {};
  };

  proposal_event e;
  std::optional<std::string> action;
  AGENTCTX_TRY(text_member("action", action));
  if (!action || *action == "propose") {
    e.action = proposal_action::propose;
  } else if (*action == "accept") {
    e.action = proposal_action::accept;
  } else if (*action == "reject") {
    e.action = proposal_action::reject;
  } else {
    return invalid("action " + quote_for_message(*action) + " is not propose, accept or reject");
  }
  auto context = id_member("context_id");
  if (!context) return unexpected(std::move(context).error());
  if (!*context) return invalid("context_id is missing");
  e.context_id = **context;
  auto proposal = id_member("proposal_id");
  if (!proposal) return unexpected(std::move(proposal).error());
  e.proposal_id = *proposal;
  if (const auto created = member("created_at_unix_ms")) {
    std::uint64_t ms = 0;
    if (created->get_uint64().get(ms) != simdjson::SUCCESS) return invalid("created_at_unix_ms is not an unsigned integer");
    e.created_at_unix_ms = ms;
  }
  AGENTCTX_TRY(text_member("from_path", e.from_path));
  AGENTCTX_TRY(text_member("to_path", e.to_path));
  AGENTCTX_TRY(text_member("actor", e.actor));
  AGENTCTX_TRY(text_member("title", e.title));
  AGENTCTX_TRY(text_member("why", e.why));
  AGENTCTX_TRY(text_member("what", e.what));
  AGENTCTX_TRY(text_member("where", e.where));
  AGENTCTX_TRY(text_member("reason", e.reason));
  AGENTCTX_TRY(text_member("outcome", e.outcome));
  return e;
}

enum class proposal_status { pending, accepted, rejected };

inline std::string_view status_name(proposal_status status) noexcept {
  switch (status) {
    case proposal_status::accepted: return "accepted";
    case proposal_status::rejected: return "rejected";
    case proposal_status::pending: break;
  }
  return "pending";
}

/// A proposal's state after folding its events.
struct proposal {
  std::uint32_t id = 0;          ///< the chunk id of the propose event
  std::uint32_t context_id = 0;  ///< the proposed chunk
  std::string from_path = "AGENTS.delta.db";
  std::string to_path = "AGENTS.user.db";
  proposal_status status = proposal_status::pending;
  std::optional<std::string> proposed_by;
  std::optional<std::uint64_t> proposed_at_unix_ms;
  std::optional<std::string> title, why, what, where;
  std::optional<std::uint32_t> decision_id;  ///< the chunk id of the deciding event
  std::optional<std::string> decided_by;
  std::optional<std::uint64_t> decided_at_unix_ms;
  std::optional<std::string> reason;
  std::optional<std::string> outcome;
};

/// Every proposal of a delta layer, in the order they were made.
struct proposal_ledger {
  std::vector<proposal> proposals;
  std::vector<std::string> warnings;  ///< events that were skipped, one line each

  const proposal* find(std::uint32_t proposal_id) const noexcept {
    for (const proposal& p : proposals) {
      if (p.id == proposal_id) return &p;
    }
    return nullptr;
  }
  /// The pending proposal of chunk `context_id`, if any.
  const proposal* pending_for(std::uint32_t context_id) const noexcept {
    for (const proposal& p : proposals) {
      if (p.context_id == context_id && p.status == proposal_status::pending) return &p;
    }
    return nullptr;
  }
  std::size_t count(proposal_status status) const noexcept {
    return static_cast<std::size_t>(
        std::count_if(proposals.begin(), proposals.end(), [&](const proposal& p) { return p.status == status; }));
  }
};

/// Folds the meta.proposal_event chunks of `delta` in file order. Fails only
/// when a chunk cannot be read (a damaged file); bad events become warnings.
inline result<proposal_ledger> fold_proposals(const layer_reader& delta) {
  proposal_ledger ledger;
  const auto skip = [&](std::uint32_t event_id, const std::string& why) {
    ledger.warnings.push_back("event " + std::to_string(event_id) + " is skipped: " + why);
  };
  for (std::size_t i = 0; i < delta.chunk_count(); ++i) {
    auto chunk = delta.chunk(i);
    if (!chunk) return unexpected(std::move(chunk).error());
    if (chunk->kind != proposal_event_kind) continue;
    auto event = parse_proposal_event(chunk->content);
    if (!event) {
      skip(chunk->id, event.error().message);
      continue;
    }
    if (event->action == proposal_action::propose) {
      proposal p;
      p.id = chunk->id;
      p.context_id = event->context_id;
      if (event->from_path) p.from_path = *event->from_path;
      if (event->to_path) p.to_path = *event->to_path;
      p.proposed_by = event->actor;
      p.proposed_at_unix_ms = event->created_at_unix_ms ? event->created_at_unix_ms : chunk->created_at_unix_ms;
      p.title = std::move(event->title);
      p.why = std::move(event->why);
      p.what = std::move(event->what);
      p.where = std::move(event->where);
      ledger.proposals.push_back(std::move(p));
      continue;
    }
    if (!event->proposal_id) continue;  // a direct promotion: a record, not a decision on a proposal
    auto it = std::find_if(ledger.proposals.begin(), ledger.proposals.end(),
                           [&](const proposal& p) { return p.id == *event->proposal_id; });
    if (it == ledger.proposals.end()) {
      skip(chunk->id, "it decides proposal " + std::to_string(*event->proposal_id) + ", which does not precede it");
      continue;
    }
    if (it->status != proposal_status::pending) {
      skip(chunk->id, "proposal " + std::to_string(it->id) + " was already " + std::string(status_name(it->status)) +
                          " by event " + std::to_string(it->decision_id.value_or(0)));
      continue;
    }
    it->status = event->action == proposal_action::accept ? proposal_status::accepted : proposal_status::rejected;
    it->decision_id = chunk->id;
    it->decided_by = std::move(event->actor);
    it->decided_at_unix_ms = event->created_at_unix_ms ? event->created_at_unix_ms : chunk->created_at_unix_ms;
    it->reason = std::move(event->reason);
    it->outcome = std::move(event->outcome);
  }
  return ledger;
}

// ---- operations --------------------------------------------------------------

struct proposal_request {
  std::uint32_t context_id = 0;
  std::string target = "user";
  std::string actor = "mcp";
  std::optional<std::string> title, why, what, where;
  std::optional<std::uint64_t> created_at_unix_ms;  ///< default: now
};

struct proposal_outcome {
  std::uint32_t proposal_id = 0;
  std::uint32_t context_id = 0;
  bool already_pending = false;  ///< an equal pending proposal existed; nothing was written
  std::string path;              ///< the delta layer
};

/// What a review decision is attributed to.
struct review_options {
  std::string actor = "human";        ///< who decides (recorded in the event)
  std::optional<std::string> reason;  ///< required to reject
  bool supersede = false;             ///< promotion may replace a user chunk with other content
  std::optional<std::uint64_t> now_unix_ms;  ///< default: now
};

/// What happened to one chunk of a promotion.
enum class promotion_outcome { promoted, unchanged, superseded };

inline std::string_view outcome_name(promotion_outcome outcome) noexcept {
  switch (outcome) {
    case promotion_outcome::unchanged: return "unchanged";
    case promotion_outcome::superseded: return "superseded";
    case promotion_outcome::promoted: break;
  }
  return "promoted";
}

struct promoted_chunk {
  std::uint32_t context_id = 0;
  promotion_outcome outcome = promotion_outcome::promoted;
  std::optional<std::uint32_t> proposal_id;  ///< the proposal this accepted, if any
  std::uint32_t decision_id = 0;             ///< the event recording it in the delta layer
};

struct promotion_report {
  std::vector<promoted_chunk> chunks;  ///< in request order
  std::string user_path;
  std::string delta_path;
  bool user_created = false;
};

struct rejection_report {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> decisions;  ///< (proposal id, event id)
  std::string delta_path;
};

namespace detail {

inline bool is_meta_kind(std::string_view kind) noexcept { return kind.starts_with("meta."); }

inline unexpected invalid_request(std::string message) { return fail(errc::invalid_argument, std::move(message)); }

// A new meta.proposal_event chunk for `e`, appended to `delta` with an
// all-zero embedding row (events are not searched by meaning).
inline std::uint32_t append_event(const layer_stack& stack, layer_contents& delta, const proposal_event& e,
                                  std::string_view author) {
  chunk event;
  event.content = encode_proposal_event(e);
  event.id = next_free_chunk_id(stack, event.content, delta.chunks);
  event.kind = std::string(proposal_event_kind);
  event.author = std::string(author);
  event.confidence = 1.0f;
  event.created_at_unix_ms = e.created_at_unix_ms.value_or(0);
  event.sources.push_back(source_ref::to_chunk(e.context_id));
  const std::uint32_t id = event.id;
  delta.chunks.push_back(std::move(event));
  const std::vector<float> zeros(delta.embeddings.dim, 0.0f);
  append_row(delta.embeddings, zeros);
  return id;
}

// The delta layer of `stack` with its contents and review state, or an error
// naming `path` when it does not exist. Read by a writer under the layer's
// lock, the file is made durable first (io::sync_file_and_directory): a
// writer killed before its sync may have left it in the page cache only, and
// an answer read from it ("already pending", "already accepted") must not be
// undone by a power failure.
struct delta_state {
  const layer_reader* reader = nullptr;
  layer_contents contents;
  proposal_ledger ledger;
};

inline result<delta_state> read_delta(io::file_system& fs, const layer_stack& stack, const std::string& path) {
  const auto index = stack.index_of(layer_id::delta);
  if (!index) return fail(errc::not_found, "the delta layer does not exist", path);
  AGENTCTX_TRY(io::sync_file_and_directory(fs, path));
  delta_state state;
  state.reader = &stack.layers()[*index].reader;
  auto contents = read_valid_contents(stack, layer_id::delta);
  if (!contents) return unexpected(std::move(contents).error());
  state.contents = std::move(**contents);
  auto ledger = fold_proposals(*state.reader);
  if (!ledger) return unexpected(std::move(ledger).error());
  state.ledger = std::move(*ledger);
  return state;
}

inline const chunk* find_chunk(const layer_contents& contents, std::uint32_t id) noexcept {
  for (const chunk& c : contents.chunks) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

inline bool same_profile(const std::optional<embedding_profile>& a, const std::optional<embedding_profile>& b) {
  return !a || !b || *a == *b;
}

// One chunk to promote, named by its chunk id or by a proposal id; resolved
// under the locks into the delta chunk and the proposal it settles.
struct promotion_item {
  std::uint32_t id = 0;
  bool is_proposal = false;
  std::uint32_t context_id = 0;
  std::optional<std::uint32_t> proposal_id;
};

// The pending proposal `id` of `ledger`, or invalid_argument.
inline result<const proposal*> pending_proposal(const proposal_ledger& ledger, std::uint32_t id) {
  const proposal* p = ledger.find(id);
  if (p == nullptr) return fail(errc::not_found, "there is no proposal " + std::to_string(id));
  if (p->status != proposal_status::pending) {
    return invalid_request("proposal " + std::to_string(id) + " was already " + std::string(status_name(p->status)) +
                           (p->decided_by ? " by " + *p->decided_by : std::string()));
  }
  return p;
}

inline result<promotion_report> promote(io::file_system& fs, const std::vector<layer_location>& layers,
                                        std::vector<promotion_item> items, const review_options& options) {
  if (items.empty()) return invalid_request("no ids are given");
  if (options.actor.empty() || !is_valid_utf8(options.actor)) return invalid_request("the reviewer's name is empty or not UTF-8");
  auto delta_path = require_location(layers, layer_id::delta);
  if (!delta_path) return unexpected(std::move(delta_path).error());
  auto user_path = require_location(layers, layer_id::user);
  if (!user_path) return unexpected(std::move(user_path).error());
  if (*delta_path == *user_path) return invalid_request("the delta and user layers are the same file: " + *user_path);

  auto delta_lock = lock_layer(fs, *delta_path);
  if (!delta_lock) return unexpected(std::move(delta_lock).error());
  auto user_lock = lock_layer(fs, *user_path);
  if (!user_lock) return unexpected(std::move(user_lock).error());
  auto stack = open_for_update(fs, layers);
  if (!stack) return unexpected(std::move(stack).error());
  auto delta = read_delta(fs, *stack, *delta_path);
  if (!delta) return unexpected(std::move(delta).error());
  auto existing_user = read_valid_contents(*stack, layer_id::user);
  if (!existing_user) return unexpected(std::move(existing_user).error());

  promotion_report report;
  report.user_path = *user_path;
  report.delta_path = *delta_path;
  report.user_created = !existing_user->has_value();
  layer_contents user;
  if (report.user_created) {
    user.metadata_json = delta->contents.metadata_json;
    user.embeddings.type = delta->contents.embeddings.type;
    user.embeddings.dim = delta->contents.embeddings.dim;
    user.embeddings.quant_scale = delta->contents.embeddings.quant_scale;
  } else {
    user = std::move(**existing_user);
    const auto profile_of = [&](layer_id id) { return stack->layers()[*stack->index_of(id)].profile; };
    if (!same_profile(profile_of(layer_id::delta), profile_of(layer_id::user))) {
      return fail(errc::incompatible, "the delta layer records embedding profile " +
                                          describe(*profile_of(layer_id::delta)) + " and the user layer " +
                                          describe(*profile_of(layer_id::user)) + ": rows cannot be copied");
    }
  }

  // Resolve and check every item before changing anything.
  for (promotion_item& item : items) {
    if (!item.is_proposal) {
      item.context_id = item.id;
      continue;
    }
    auto p = pending_proposal(delta->ledger, item.id);
    if (!p) return unexpected(std::move(p).error());
    item.context_id = (*p)->context_id;
    item.proposal_id = (*p)->id;
  }
  std::vector<promotion_item> unique_items;
  for (const promotion_item& item : items) {
    const bool repeated = std::any_of(unique_items.begin(), unique_items.end(),
                                      [&](const promotion_item& u) { return u.context_id == item.context_id; });
    if (!repeated) unique_items.push_back(item);
  }
  for (promotion_item& item : unique_items) {
    const chunk* source = find_chunk(delta->contents, item.context_id);
    if (source == nullptr) {
      return fail(errc::not_found, "chunk " + std::to_string(item.context_id) + " is not in the delta layer " + *delta_path);
    }
    if (is_meta_kind(source->kind)) {
      return invalid_request("chunk " + std::to_string(item.context_id) + " is a " + source->kind +
                             " record, not context to promote");
    }
    if (!item.proposal_id) {
      if (const proposal* pending = delta->ledger.pending_for(item.context_id)) item.proposal_id = pending->id;
    }
    const chunk* present = find_chunk(user, item.context_id);
    if (present != nullptr && present->content != source->content && !options.supersede) {
      return invalid_request("chunk " + std::to_string(item.context_id) +
                             " is already in the user layer with other content; pass --supersede to replace it");
    }
  }

  const std::uint64_t now = options.now_unix_ms.value_or(now_unix_ms());
  bool user_changed = false;
  for (const promotion_item& item : unique_items) {
    const chunk& source = *find_chunk(delta->contents, item.context_id);
    chunk copy = source;
    copy.author = "human";
    copy.created_at_unix_ms = now;
    const source_ref provenance = source_ref::to_chunk(source.id);
    if (std::find(copy.sources.begin(), copy.sources.end(), provenance) == copy.sources.end()) {
      copy.sources.push_back(provenance);
    }
    const auto delta_row = delta->reader->row(
        delta->reader->chunk(*delta->reader->find_chunk(source.id)).value().embedding_row);
    if (!delta_row) return unexpected(delta_row.error());
    std::vector<float> row(user.embeddings.dim);
    delta_row->to_f32(row);

    promoted_chunk outcome;
    outcome.context_id = item.context_id;
    outcome.proposal_id = item.proposal_id;
    auto present = std::find_if(user.chunks.begin(), user.chunks.end(),
                                [&](const chunk& c) { return c.id == item.context_id; });
    if (present == user.chunks.end()) {
      user.chunks.push_back(std::move(copy));
      append_row(user.embeddings, row);
      outcome.outcome = promotion_outcome::promoted;
      user_changed = true;
    } else if (present->content == source.content) {
      outcome.outcome = promotion_outcome::unchanged;
    } else {
      const std::size_t index = static_cast<std::size_t>(present - user.chunks.begin());
      *present = std::move(copy);
      embedding_matrix replacement = user.embeddings;
      replacement.f32_values.clear();
      replacement.i8_values.clear();
      append_row(replacement, row);
      if (user.embeddings.type == element_type::i8) {
        std::copy(replacement.i8_values.begin(), replacement.i8_values.end(),
                  user.embeddings.i8_values.begin() + static_cast<std::ptrdiff_t>(index * user.embeddings.dim));
      } else {
        std::copy(replacement.f32_values.begin(), replacement.f32_values.end(),
                  user.embeddings.f32_values.begin() + static_cast<std::ptrdiff_t>(index * user.embeddings.dim));
      }
      outcome.outcome = promotion_outcome::superseded;
      user_changed = true;
    }
    report.chunks.push_back(outcome);
  }
  if (user_changed) AGENTCTX_TRY(write_layer(fs, *user_path, user));

  for (promoted_chunk& outcome : report.chunks) {
    proposal_event e;
    e.action = proposal_action::accept;
    e.proposal_id = outcome.proposal_id;
    e.context_id = outcome.context_id;
    e.created_at_unix_ms = now;
    e.actor = options.actor;
    e.reason = options.reason;
    e.outcome = std::string(outcome_name(outcome.outcome));
    outcome.decision_id = append_event(*stack, delta->contents, e, "human");
  }
  AGENTCTX_TRY(write_layer(fs, *delta_path, delta->contents));
  return report;
}

}  // namespace detail

/// An agent proposes delta chunk `request.context_id` for the user layer
/// (agents_context_propose). Errors: invalid_argument when the target is not
/// "user", the id is 0, the chunk is not in the delta layer, is itself a
/// meta.* record, or was already accepted; not_found when the delta layer
/// does not exist. A chunk with a pending proposal is not proposed twice:
/// the outcome names the existing proposal.
inline result<proposal_outcome> propose_promotion(io::file_system& fs, const std::vector<layer_location>& layers,
                                                  const proposal_request& request) {
  if (request.target != "user") {
    return detail::invalid_request("the target of a proposal must be user, not '" + request.target + "'");
  }
  if (request.context_id == 0) return detail::invalid_request("context_id 0 is not a chunk id");
  if (request.actor.empty() || !is_valid_utf8(request.actor)) return detail::invalid_request("the actor is empty or not UTF-8");
  for (const auto* text : {&request.title, &request.why, &request.what, &request.where}) {
    if (*text && !is_valid_utf8(**text)) return detail::invalid_request("a proposal text is not valid UTF-8");
  }
  auto path = require_location(layers, layer_id::delta);
  if (!path) return unexpected(std::move(path).error());
  auto lock = lock_layer(fs, *path);
  if (!lock) return unexpected(std::move(lock).error());
  auto stack = open_for_update(fs, layers);
  if (!stack) return unexpected(std::move(stack).error());
  auto delta = detail::read_delta(fs, *stack, *path);
  if (!delta) return unexpected(std::move(delta).error());

  const chunk* proposed = detail::find_chunk(delta->contents, request.context_id);
  if (proposed == nullptr) {
    return fail(errc::not_found, "chunk " + std::to_string(request.context_id) + " is not in the delta layer " + *path);
  }
  if (detail::is_meta_kind(proposed->kind)) {
    return detail::invalid_request("chunk " + std::to_string(request.context_id) + " is a " + proposed->kind +
                                   " record, not context to propose");
  }
  proposal_outcome outcome;
  outcome.context_id = request.context_id;
  outcome.path = *path;
  if (const proposal* pending = delta->ledger.pending_for(request.context_id)) {
    outcome.proposal_id = pending->id;
    outcome.already_pending = true;
    return outcome;
  }
  for (const proposal& p : delta->ledger.proposals) {
    if (p.context_id == request.context_id && p.status == proposal_status::accepted) {
      return detail::invalid_request("chunk " + std::to_string(request.context_id) + " was already accepted (proposal " +
                                     std::to_string(p.id) + ")");
    }
  }

  proposal_event e;
  e.context_id = request.context_id;
  e.from_path = std::string(standard_file_name(layer_id::delta));
  e.to_path = std::string(standard_file_name(layer_id::user));
  e.created_at_unix_ms = request.created_at_unix_ms.value_or(now_unix_ms());
  e.actor = request.actor;
  e.title = request.title;
  e.why = request.why;
  e.what = request.what;
  e.where = request.where;
  outcome.proposal_id = detail::append_event(*stack, delta->contents, e, request.actor == "human" ? "human" : "mcp");
  AGENTCTX_TRY(write_layer(fs, *path, delta->contents));
  return outcome;
}

/// Copies delta chunks `context_ids` into the user layer (agentsdb promote).
/// See the file comment. Errors: invalid_argument for an id not in delta, a
/// meta.* chunk, or a user chunk with other content without `supersede`;
/// incompatible when the two layers record different embedding profiles.
inline result<promotion_report> promote_chunks(io::file_system& fs, const std::vector<layer_location>& layers,
                                               std::span<const std::uint32_t> context_ids,
                                               const review_options& options = {}) {
  std::vector<detail::promotion_item> items;
  for (const std::uint32_t id : context_ids) items.push_back({id, false, 0, std::nullopt});
  return detail::promote(fs, layers, std::move(items), options);
}

/// Accepts pending proposals: promotes their chunks as promote_chunks does
/// and records the decisions. Errors as promote_chunks, and invalid_argument
/// for an unknown proposal or one already decided.
inline result<promotion_report> accept_proposals(io::file_system& fs, const std::vector<layer_location>& layers,
                                                 std::span<const std::uint32_t> proposal_ids,
                                                 const review_options& options = {}) {
  std::vector<detail::promotion_item> items;
  for (const std::uint32_t id : proposal_ids) items.push_back({id, true, 0, std::nullopt});
  return detail::promote(fs, layers, std::move(items), options);
}

/// Rejects pending proposals with `options.reason` (required), recording one
/// decision event each; nothing is copied. Errors: invalid_argument for no
/// ids, no reason, an unknown proposal or one already decided; not_found
/// when the delta layer does not exist.
inline result<rejection_report> reject_proposals(io::file_system& fs, const std::vector<layer_location>& layers,
                                                 std::span<const std::uint32_t> proposal_ids,
                                                 const review_options& options) {
  if (proposal_ids.empty()) return detail::invalid_request("no proposal ids are given");
  if (!options.reason || options.reason->empty()) return detail::invalid_request("a rejection needs a reason");
  if (!is_valid_utf8(*options.reason)) return detail::invalid_request("the reason is not valid UTF-8");
  if (options.actor.empty() || !is_valid_utf8(options.actor)) {
    return detail::invalid_request("the reviewer's name is empty or not UTF-8");
  }
  auto path = require_location(layers, layer_id::delta);
  if (!path) return unexpected(std::move(path).error());
  auto lock = lock_layer(fs, *path);
  if (!lock) return unexpected(std::move(lock).error());
  auto stack = open_for_update(fs, layers);
  if (!stack) return unexpected(std::move(stack).error());
  auto delta = detail::read_delta(fs, *stack, *path);
  if (!delta) return unexpected(std::move(delta).error());

  std::vector<const proposal*> chosen;
  for (const std::uint32_t id : proposal_ids) {
    auto p = detail::pending_proposal(delta->ledger, id);
    if (!p) return unexpected(std::move(p).error());
    if (std::find(chosen.begin(), chosen.end(), *p) == chosen.end()) chosen.push_back(*p);
  }
  rejection_report report;
  report.delta_path = *path;
  const std::uint64_t now = options.now_unix_ms.value_or(now_unix_ms());
  for (const proposal* p : chosen) {
    proposal_event e;
    e.action = proposal_action::reject;
    e.proposal_id = p->id;
    e.context_id = p->context_id;
    e.created_at_unix_ms = now;
    e.actor = options.actor;
    e.reason = options.reason;
    report.decisions.emplace_back(p->id, detail::append_event(*stack, delta->contents, e, "human"));
  }
  AGENTCTX_TRY(write_layer(fs, *path, delta->contents));
  return report;
}

}  // namespace agentctx::agdb
