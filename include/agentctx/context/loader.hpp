// agentctx/context/loader.hpp: read_context (seed 003, RFC-011), the bounded
// bundle an agent reads at the start of a session on one item: taste
// (global), brief, notes, recent_log and vocabulary_gaps, in that reading
// order, each with its path, last-modified time and content hash.
//
//   auto root = io::confined_file_system::open("/home/me/project");   // or any io::file_system
//   context::loader loader(**root, {});                               // the default layout
//   auto bundle = loader.read_context("iguana-01");
//   auto page = loader.read_full_notes("iguana-01", 120, 60);         // lines 120..179
//
// The layout (configuration, so the loader serves any project) names the
// files relative to the root; "{item}" stands for the item id, which must be
// a safe name (core/safe_name.hpp), so it is always one path component:
//   taste.md  {item}/brief.md  {item}/notes.md  {item}/log.jsonl  {item}/vocabulary_gaps.jsonl
//
// What is shortened, and how it says so (excerpt.hpp):
// - notes past 50 lines: the first 10 and the last 30, with a marker naming
//   the elided count and read_full_notes; `summarized`, `full_length_lines`;
// - taste past 80 lines: truncated within its sections, headings kept;
// - recent_log: the entries of the last 5 sessions or of the last 24 hours,
//   whichever is more, at most 50, read from the end of log.jsonl; a torn
//   last line is skipped and reported, lines that are not JSON objects are
//   counted;
// - vocabulary_gaps: the last 5 gaps not marked "resolved": true;
// - the budget (max_bytes, max_tokens; 0 = none) is spent in reading order
//   on the prose bodies and the log and gap entries; whatever does not fit
//   is cut at a line (or entry) boundary and listed in `omitted`.
// Nothing is cut silently: every shortening is in the text and in the counts.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/context/excerpt.hpp"
#include "agentctx/context/jsonl_tail.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/safe_name.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/core/token_estimate.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/json/dom_members.hpp"

namespace agentctx::context {

/// Where the files are, relative to the root; "{item}" is the item id.
struct layout {
  std::string taste = "taste.md";
  std::string brief = "{item}/brief.md";
  std::string notes = "{item}/notes.md";
  std::string log = "{item}/log.jsonl";
  std::string gaps = "{item}/vocabulary_gaps.jsonl";
  /// Pending and decided proposals (proposals.hpp), and the decision log.
  std::string proposals = ".read-context/proposals";
  std::string decisions = ".read-context/decisions.jsonl";

  /// `pattern` with every "{item}" replaced by `item`.
  static std::string resolve(std::string_view pattern, std::string_view item) {
    std::string out;
    std::size_t at = 0;
    while (true) {
      const std::size_t found = pattern.find("{item}", at);
      out.append(pattern.substr(at, found == std::string_view::npos ? std::string_view::npos : found - at));
      if (found == std::string_view::npos) return out;
      out.append(item);
      at = found + 6;
    }
  }
};

struct loader_options {
  context::layout layout;
  notes_policy notes;
  taste_policy taste;
  std::size_t recent_sessions = 5;          ///< the log entries of this many latest sessions...
  std::uint64_t recent_window_ms = 86'400'000;  ///< ...or of this long before now, whichever is more
  std::size_t max_log_entries = 50;         ///< the hard cap of recent_log
  std::size_t max_gaps = 5;
  std::size_t max_bytes = 0;                ///< budget of the bundle's bodies and entries (0: none)
  std::size_t max_tokens = 0;               ///< budget in estimate_tokens() tokens (0: none)
  std::uint64_t max_file_bytes = 16 * 1024 * 1024;  ///< taste, brief and notes larger than this are refused
  std::function<std::uint64_t()> clock;     ///< Unix ms; empty: the system clock
};

/// One markdown tier: taste, brief or notes.
struct text_tier {
  std::string path;
  bool exists = false;
  std::string content;                      ///< as shown (possibly shortened)
  std::optional<std::uint64_t> last_modified_ms;
  std::string hash;                         ///< "sha256:<hex>" of the whole file ("" when missing)
  std::uint64_t bytes = 0;                  ///< of the whole file
  std::size_t full_length_lines = 0;
  std::size_t elided_lines = 0;             ///< by the notes or taste rule
  std::size_t budget_cut_lines = 0;         ///< by the budget
  bool summarized() const noexcept { return elided_lines > 0 || budget_cut_lines > 0; }
};

struct log_entry {
  std::uint64_t line = 0;  ///< 1-based line number in the log, counted from the end: 1 is the newest
  std::optional<std::string> timestamp;
  std::optional<std::string> session_id;
  std::optional<std::string> summary;
};

struct log_tier {
  std::string path;
  bool exists = false;
  std::optional<std::uint64_t> last_modified_ms;
  std::vector<log_entry> entries;  ///< oldest first
  std::size_t sessions = 0;        ///< distinct session ids among them
  bool partial_last_line = false;  ///< a torn last line was skipped
  std::size_t skipped_lines = 0;   ///< lines that are not JSON objects, within the window read
  bool capped = false;             ///< max_log_entries stopped the window
  std::size_t budget_dropped = 0;  ///< oldest entries left out by the budget
};

struct gaps_tier {
  std::string path;
  bool exists = false;
  std::optional<std::uint64_t> last_modified_ms;
  std::vector<std::string> entries;  ///< each a JSON object (minified), oldest first
  bool partial_last_line = false;
  std::size_t skipped_lines = 0;
  std::size_t budget_dropped = 0;
};

/// A part of the bundle the budget shortened or left out.
struct omission {
  std::string tier;
  std::string what;  ///< "12 lines", "3 entries"
};

struct context_bundle {
  std::string item_id;
  std::string loaded_at;  ///< RFC 3339 UTC
  text_tier taste;
  text_tier brief;
  text_tier notes;
  log_tier recent_log;
  gaps_tier vocabulary_gaps;
  std::size_t max_bytes = 0;
  std::size_t max_tokens = 0;
  text_cost used;
  std::vector<omission> omitted;
};

/// A page of the full notes.
struct notes_page {
  std::string path;
  bool exists = false;
  std::string hash;
  std::size_t start_line = 1;  ///< 1-based
  std::size_t total_lines = 0;
  std::vector<std::string> lines;
  std::optional<std::size_t> next_line;  ///< start_line of the next page; unset on the last
};

namespace detail {

/// The JSONL tail of `path`: the lines a `take` callback accepts, newest
/// first, until it returns false. Missing file: exists = false.
struct jsonl_scan {
  bool exists = false;
  bool partial_last_line = false;
  std::size_t skipped_lines = 0;
};

template <class Take>
result<jsonl_scan> scan_jsonl_from_end(io::file_system& fs, const std::string& path, Take&& take) {
  jsonl_scan scan;
  auto reader = reverse_line_reader::open(fs, path);
  if (!reader) {
    if (reader.error().code == errc::not_found) return scan;
    return unexpected(std::move(reader).error());
  }
  scan.exists = true;
  scan.partial_last_line = reader->partial_last_line();
  simdjson::dom::parser parser;
  std::string line;
  std::uint64_t number = 0;
  bool first = true;
  while (true) {
    auto more = reader->previous(line);
    if (!more) return unexpected(std::move(more).error());
    if (!*more) break;
    const bool torn = first && scan.partial_last_line;
    first = false;
    if (torn) continue;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++number;
    simdjson::dom::object object;
    if (parser.parse(line).get_object().get(object) != simdjson::SUCCESS) {
      ++scan.skipped_lines;
      continue;
    }
    if (!take(object, number)) break;
  }
  return scan;
}

}  // namespace detail

class loader {
 public:
  /// `fs` is the root (for a real folder an io::confined_file_system); it
  /// must outlive the loader.
  loader(io::file_system& fs, loader_options options) : fs_(&fs), options_(std::move(options)) {}

  const loader_options& options() const noexcept { return options_; }

  /// The bundle of `item_id`. Errors: invalid_argument (the id is not a safe
  /// name), outside_root (a symlink on the way), corrupt (a file over
  /// max_file_bytes, a log line over 1 MiB), io_error.
  result<context_bundle> read_context(std::string_view item_id) const {
    AGENTCTX_TRY(check_safe_name(item_id, "item id"));
    const std::uint64_t now = options_.clock ? options_.clock() : now_unix_ms();
    context_bundle out;
    out.item_id = std::string(item_id);
    out.loaded_at = format_rfc3339_utc_ms(now);
    out.max_bytes = options_.max_bytes;
    out.max_tokens = options_.max_tokens;
    const layout& paths = options_.layout;

    auto taste = read_tier(paths.taste);
    if (!taste) return unexpected(std::move(taste).error());
    out.taste = std::move(*taste);
    excerpt shown = truncate_sections(out.taste.content, options_.taste, "the file " + out.taste.path);
    out.taste.content = std::move(shown.text);
    out.taste.elided_lines = shown.elided_lines;

    auto brief = read_tier(layout::resolve(paths.brief, item_id));
    if (!brief) return unexpected(std::move(brief).error());
    out.brief = std::move(*brief);

    auto notes = read_tier(layout::resolve(paths.notes, item_id));
    if (!notes) return unexpected(std::move(notes).error());
    out.notes = std::move(*notes);
    shown = elide_middle(out.notes.content, options_.notes,
                         "read_full_notes(\"" + std::string(item_id) + "\") or the file " + out.notes.path);
    out.notes.content = std::move(shown.text);
    out.notes.elided_lines = shown.elided_lines;

    auto log = read_log(layout::resolve(paths.log, item_id), now);
    if (!log) return unexpected(std::move(log).error());
    out.recent_log = std::move(*log);
    auto gaps = read_gaps(layout::resolve(paths.gaps, item_id));
    if (!gaps) return unexpected(std::move(gaps).error());
    out.vocabulary_gaps = std::move(*gaps);

    spend_budget(out);
    return out;
  }

  /// Lines [start_line, start_line + max_lines) of the whole notes of
  /// `item_id` (1-based; max_lines 0: to the end). Errors: those of
  /// read_context, invalid_argument for start_line 0.
  result<notes_page> read_full_notes(std::string_view item_id, std::size_t start_line = 1,
                                     std::size_t max_lines = 0) const {
    AGENTCTX_TRY(check_safe_name(item_id, "item id"));
    if (start_line == 0) return fail(errc::invalid_argument, "start_line counts from 1");
    auto tier = read_tier(layout::resolve(options_.layout.notes, item_id));
    if (!tier) return unexpected(std::move(tier).error());
    notes_page page;
    page.path = tier->path;
    page.exists = tier->exists;
    page.hash = tier->hash;
    page.start_line = start_line;
    const std::vector<std::string_view> lines = split_lines(tier->content);
    page.total_lines = lines.size();
    const std::size_t begin = std::min(start_line - 1, lines.size());
    const std::size_t end = max_lines == 0 ? lines.size() : std::min(lines.size(), begin + max_lines);
    for (std::size_t i = begin; i < end; ++i) page.lines.emplace_back(lines[i]);
    if (end < lines.size()) page.next_line = end + 1;
    return page;
  }

 private:
  /// A markdown file, whole. Missing: exists = false.
  result<text_tier> read_tier(std::string path) const {
    text_tier tier;
    tier.path = std::move(path);
    auto size = fs_->file_size(tier.path);
    if (!size) {
      if (size.error().code == errc::not_found) return tier;
      return unexpected(std::move(size).error());
    }
    if (*size > options_.max_file_bytes) {
      return fail(errc::corrupt,
                  "is " + std::to_string(*size) + " bytes, more than the limit of " +
                      std::to_string(options_.max_file_bytes),
                  tier.path);
    }
    auto mapped = fs_->map(tier.path);
    if (!mapped) {
      if (mapped.error().code == errc::not_found) return tier;
      return unexpected(std::move(mapped).error());
    }
    tier.exists = true;
    tier.content.assign(reinterpret_cast<const char*>(mapped->data()), mapped->size());
    tier.bytes = tier.content.size();
    tier.hash = sha256_text(tier.content);
    tier.full_length_lines = split_lines(tier.content).size();
    tier.last_modified_ms = modified_time(tier.path);
    return tier;
  }

  std::optional<std::uint64_t> modified_time(const std::string& path) const {
    auto time = fs_->modified_time_ms(path);
    return time ? std::optional<std::uint64_t>(*time) : std::nullopt;
  }

  /// The entries of the last `recent_sessions` sessions or of the last
  /// `recent_window_ms`, whichever is more, at most max_log_entries.
  result<log_tier> read_log(std::string path, std::uint64_t now) const {
    log_tier tier;
    tier.path = std::move(path);
    std::set<std::string> sessions;
    const std::uint64_t since = now > options_.recent_window_ms ? now - options_.recent_window_ms : 0;
    auto scan = detail::scan_jsonl_from_end(*fs_, tier.path, [&](simdjson::dom::object object, std::uint64_t line) {
      log_entry entry;
      entry.line = line;
      entry.timestamp = json::optional_string(object, "timestamp");
      entry.session_id = json::optional_string(object, "session_id");
      entry.summary = json::optional_string(object, "summary");
      bool recent = false;
      if (entry.timestamp) {
        if (auto at = parse_rfc3339_utc_ms(*entry.timestamp)) recent = *at >= since;
      }
      const bool known_session = entry.session_id && sessions.count(*entry.session_id) == 1;
      const bool room_for_session = sessions.size() < options_.recent_sessions;
      if (!recent && !known_session && !room_for_session) return false;
      if (tier.entries.size() == options_.max_log_entries) {
        tier.capped = true;
        return false;
      }
      if (entry.session_id) sessions.insert(*entry.session_id);
      tier.entries.push_back(std::move(entry));
      return true;
    });
    if (!scan) return unexpected(std::move(scan).error());
    tier.exists = scan->exists;
    tier.partial_last_line = scan->partial_last_line;
    tier.skipped_lines = scan->skipped_lines;
    tier.sessions = sessions.size();
    std::reverse(tier.entries.begin(), tier.entries.end());
    if (tier.exists) tier.last_modified_ms = modified_time(tier.path);
    return tier;
  }

  /// The last max_gaps gaps not marked "resolved": true.
  result<gaps_tier> read_gaps(std::string path) const {
    gaps_tier tier;
    tier.path = std::move(path);
    auto scan = detail::scan_jsonl_from_end(*fs_, tier.path, [&](simdjson::dom::object object, std::uint64_t) {
      if (tier.entries.size() == options_.max_gaps) return false;
      bool resolved = false;
      if (object.at_key("resolved").get_bool().get(resolved) == simdjson::SUCCESS && resolved) return true;
      tier.entries.push_back(simdjson::minify(object));
      return true;
    });
    if (!scan) return unexpected(std::move(scan).error());
    tier.exists = scan->exists;
    tier.partial_last_line = scan->partial_last_line;
    tier.skipped_lines = scan->skipped_lines;
    std::reverse(tier.entries.begin(), tier.entries.end());
    if (tier.exists) tier.last_modified_ms = modified_time(tier.path);
    return tier;
  }

  static std::string entries_left_out(std::size_t n) {
    return std::to_string(n) + (n == 1 ? " entry (the oldest)" : " entries (the oldest)");
  }

  /// Spends the budget in reading order; cuts and records what does not fit.
  void spend_budget(context_bundle& out) const {
    const std::size_t infinite = static_cast<std::size_t>(-1);
    text_cost left{options_.max_bytes == 0 ? infinite : options_.max_bytes,
                   options_.max_tokens == 0 ? infinite : options_.max_tokens};
    const auto spend = [&](text_cost cost) {
      left.bytes -= std::min(left.bytes, cost.bytes);
      left.tokens -= std::min(left.tokens, cost.tokens);
      out.used.bytes += cost.bytes;
      out.used.tokens += cost.tokens;
    };
    const auto fits = [&](text_cost cost) { return cost.bytes <= left.bytes && cost.tokens <= left.tokens; };
    for (auto [tier, name] : {std::pair{&out.taste, "taste"}, {&out.brief, "brief"}, {&out.notes, "notes"}}) {
      const text_cost cost = cost_of(tier->content);
      if (fits(cost)) {
        spend(cost);
        continue;
      }
      excerpt cut = cut_to_budget(tier->content, left, "the file " + tier->path);
      tier->budget_cut_lines = cut.elided_lines;
      tier->content = std::move(cut.text);
      spend(cost_of(tier->content));
      out.omitted.push_back({name, std::to_string(tier->budget_cut_lines) + " of " +
                                       std::to_string(cut.full_length_lines) + " lines not shown"});
    }
    // Lists: the newest entries that fit (they are oldest first).
    const auto keep_newest = [&](auto& entries, auto cost_of_entry) {
      std::size_t keep = 0;
      for (std::size_t i = entries.size(); i-- > 0;) {
        const text_cost cost = cost_of_entry(entries[i]);
        if (!fits(cost)) break;
        spend(cost);
        ++keep;
      }
      const std::size_t dropped = entries.size() - keep;
      entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(dropped));
      return dropped;
    };
    out.recent_log.budget_dropped = keep_newest(out.recent_log.entries, [](const log_entry& e) {
      std::string text = e.timestamp.value_or("") + " " + e.session_id.value_or("") + " " + e.summary.value_or("");
      return cost_of(text);
    });
    if (out.recent_log.budget_dropped > 0) {
      out.omitted.push_back({"recent_log", entries_left_out(out.recent_log.budget_dropped)});
    }
    out.vocabulary_gaps.budget_dropped =
        keep_newest(out.vocabulary_gaps.entries, [](const std::string& e) { return cost_of(e); });
    if (out.vocabulary_gaps.budget_dropped > 0) {
      out.omitted.push_back({"vocabulary_gaps", entries_left_out(out.vocabulary_gaps.budget_dropped)});
    }
  }

  io::file_system* fs_;
  loader_options options_;
};

}  // namespace agentctx::context
