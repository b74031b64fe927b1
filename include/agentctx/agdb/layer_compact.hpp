// agentctx/agdb/layer_compact.hpp: recompaction (seed 000 sections 14 and
// 15.6): a new immutable base layer with the user layer merged over the base.
//
// compact_layers() reads the base and user layers and writes a new base:
//   - the base chunks in file order, each replaced by the user chunk of the
//     same id when there is one (the user copy is in effect, section 6.2);
//     a user `tombstone` removes the base chunk and is itself dropped;
//   - then the user chunks whose id the base does not hold, in file order
//     (user tombstones of ids the base does not hold are dropped too);
//   - every record keeps its id, kind, content, author, confidence,
//     created_at and sources; rows keep their values;
//   - the base's element type. An f32 base takes user rows as f32
//     (dequantised when the user layer is i8). An i8 base keeps its bytes
//     when the user layer is i8 with the same scale; otherwise all rows are
//     re-quantised with one scale chosen over all of them (choose_i8_scale),
//     so no value is clamped;
//   - the base's layer metadata (the user's when the base has none). The two
//     layers must record the same embedding profile (incompatible
//     otherwise) and the same dim.
// The output is a deterministic function of the two inputs (same bytes every
// time) and is written atomically (write_layer). The inputs are never
// written: `out` may not name the base, user or delta file. With `archive`
// set, the consumed user and delta layers are then moved into that
// directory as AGENTS.user.<stamp>.db and AGENTS.delta.<stamp>.db (stamp:
// UTC time, yyyymmddThhmmssZ, from `now_unix_ms`), so the next writes start
// fresh layers and nothing is lost. The user and delta locks are held
// throughout, so no write lands in a layer while it is being consumed.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_update.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/agdb/proposals.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::agdb {

struct compact_request {
  std::string base;
  std::string user;
  std::string out;
  std::string delta;                      ///< rotated with --archive (may not exist)
  std::optional<std::string> archive;     ///< a directory; created when missing
  std::optional<std::uint64_t> now_unix_ms;  ///< the archive stamp; default now
};

struct compact_report {
  std::size_t base_chunks = 0;
  std::size_t user_chunks = 0;
  std::size_t replaced = 0;  ///< base chunks replaced by user copies
  std::size_t removed = 0;   ///< base chunks removed by user tombstones
  std::size_t added = 0;     ///< user chunks new to the base
  std::size_t out_chunks = 0;
  bool requantized = false;  ///< an i8 base was re-quantised with a new scale
  std::vector<std::pair<std::string, std::string>> archived;  ///< (from, to)
  std::size_t pending_proposals_archived = 0;
};

/// "20261123T054713Z".
inline std::string archive_stamp(std::uint64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

inline result<compact_report> compact_layers(io::file_system& fs, const compact_request& r) {
  const auto invalid = [](std::string message) { return fail(errc::invalid_argument, std::move(message)); };
  if (r.base.empty() || r.user.empty() || r.out.empty()) return invalid("the base, user and output files are required");
  for (const std::string* input : {&r.base, &r.user, &r.delta}) {
    if (!input->empty() && *input == r.out) return invalid("the output " + r.out + " is an input; compact never writes its inputs");
  }
  if (r.archive && r.delta.empty()) return invalid("--archive needs the delta layer's file");

  // Delta first, then user: the order every layer update takes its locks in.
  std::unique_ptr<io::file_lock> delta_lock;
  if (!r.delta.empty()) {
    auto lock = lock_layer(fs, r.delta);
    if (!lock) return unexpected(std::move(lock).error());
    delta_lock = std::move(*lock);
  }
  auto user_lock = lock_layer(fs, r.user);
  if (!user_lock) return unexpected(std::move(user_lock).error());

  auto stack = layer_stack::open(fs, {{layer_id::base, r.base, true}, {layer_id::user, r.user, true}});
  if (!stack) return unexpected(std::move(stack).error());
  auto base = read_valid_contents(*stack, layer_id::base);
  if (!base) return unexpected(std::move(base).error());
  auto user = read_valid_contents(*stack, layer_id::user);
  if (!user) return unexpected(std::move(user).error());
  const auto& base_profile = stack->layers()[*stack->index_of(layer_id::base)].profile;
  const auto& user_profile = stack->layers()[*stack->index_of(layer_id::user)].profile;
  if (base_profile && user_profile && !(*base_profile == *user_profile)) {
    return fail(errc::incompatible, "the base layer records embedding profile " + describe(*base_profile) +
                                        " and the user layer " + describe(*user_profile));
  }
  layer_contents& b = **base;
  layer_contents& u = **user;

  compact_report report;
  report.base_chunks = b.chunks.size();
  report.user_chunks = u.chunks.size();
  const std::uint32_t dim = b.embeddings.dim;
  const auto row_of = [dim](const embedding_matrix& m, std::size_t index) {
    std::vector<float> row(dim);
    for (std::size_t i = 0; i < dim; ++i) {
      row[i] = m.type == element_type::i8 ? static_cast<float>(m.i8_values[index * dim + i]) * m.quant_scale
                                          : m.f32_values[index * dim + i];
    }
    return row;
  };

  std::unordered_map<std::uint32_t, std::size_t> user_index;
  for (std::size_t i = 0; i < u.chunks.size(); ++i) user_index.emplace(u.chunks[i].id, i);

  // (chunk, source matrix, row) in output order.
  struct pick {
    const chunk* c;
    const embedding_matrix* m;
    std::size_t row;
  };
  std::vector<pick> picks;
  std::vector<bool> used(u.chunks.size(), false);
  for (std::size_t i = 0; i < b.chunks.size(); ++i) {
    const auto over = user_index.find(b.chunks[i].id);
    if (over == user_index.end()) {
      picks.push_back({&b.chunks[i], &b.embeddings, i});
      continue;
    }
    used[over->second] = true;
    const chunk& replacement = u.chunks[over->second];
    if (replacement.kind == layer_stack::tombstone_kind) {
      ++report.removed;
      continue;
    }
    ++report.replaced;
    picks.push_back({&replacement, &u.embeddings, over->second});
  }
  for (std::size_t i = 0; i < u.chunks.size(); ++i) {
    if (used[i] || u.chunks[i].kind == layer_stack::tombstone_kind) continue;
    ++report.added;
    picks.push_back({&u.chunks[i], &u.embeddings, i});
  }

  layer_contents out;
  out.metadata_json = b.metadata_json ? b.metadata_json : u.metadata_json;
  out.version_minor = b.version_minor;
  out.embeddings.type = b.embeddings.type;
  out.embeddings.dim = dim;
  out.embeddings.quant_scale = b.embeddings.quant_scale;
  const bool copy_i8 = b.embeddings.type == element_type::i8 &&
                       (u.chunks.empty() || (u.embeddings.type == element_type::i8 &&
                                             u.embeddings.quant_scale == b.embeddings.quant_scale));
  std::vector<float> all_rows;
  for (const pick& p : picks) {
    out.chunks.push_back(*p.c);
    if (copy_i8) {
      const auto begin = p.m->i8_values.begin() + static_cast<std::ptrdiff_t>(p.row * dim);
      out.embeddings.i8_values.insert(out.embeddings.i8_values.end(), begin, begin + dim);
    } else {
      const std::vector<float> row = row_of(*p.m, p.row);
      all_rows.insert(all_rows.end(), row.begin(), row.end());
    }
  }
  if (!copy_i8) {
    if (out.embeddings.type == element_type::i8) {
      out.embeddings.quant_scale = choose_i8_scale(all_rows);
      out.embeddings.i8_values = quantize_i8(all_rows, out.embeddings.quant_scale);
      report.requantized = true;
    } else {
      out.embeddings.f32_values = std::move(all_rows);
    }
  }
  report.out_chunks = out.chunks.size();
  AGENTCTX_TRY(write_layer(fs, r.out, out));

  if (r.archive) {
    auto exists = fs.exists(*r.archive);
    if (!exists) return unexpected(std::move(exists).error());
    if (!*exists) {
      AGENTCTX_TRY(fs.create_dir(*r.archive));
      AGENTCTX_TRY(fs.sync_dir(io::parent_directory(*r.archive)));
    }
    const std::string stamp = archive_stamp(r.now_unix_ms.value_or(now_unix_ms()));
    for (const auto& [path, layer] : {std::pair{r.user, layer_id::user}, std::pair{r.delta, layer_id::delta}}) {
      auto present = fs.exists(path);
      if (!present) return unexpected(std::move(present).error());
      if (!*present) continue;
      if (layer == layer_id::delta) {
        auto reader = layer_reader::open(fs, path);
        if (!reader) return unexpected(std::move(reader).error());
        auto ledger = fold_proposals(*reader);
        if (!ledger) return unexpected(std::move(ledger).error());
        report.pending_proposals_archived = ledger->count(proposal_status::pending);
      }
      const std::string to = *r.archive + "/AGENTS." + std::string(layer_name(layer)) + "." + stamp + ".db";
      auto taken = fs.exists(to);
      if (!taken) return unexpected(std::move(taken).error());
      if (*taken) return fail(errc::already_exists, "the archive already holds " + to);
      AGENTCTX_TRY(fs.rename(path, to));
      // The new name is made durable before the old one's removal: a crash
      // between the two leaves the layer in both folders, never in neither.
      AGENTCTX_TRY(fs.sync_dir(*r.archive));
      AGENTCTX_TRY(fs.sync_dir(io::parent_directory(path)));
      report.archived.emplace_back(path, to);
    }
  }
  return report;
}

}  // namespace agentctx::agdb
