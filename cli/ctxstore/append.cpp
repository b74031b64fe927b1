// ctxstore append: appends a turn to a context and moves its head to it; the
// turn is durable when the command exits 0. The payload comes from --data,
// --file or, with neither, standard input (bytes as they are), e.g.
//   ctxstore append --context 0123456789abcdef --type 1 --data '{"role":"user","text":"hi"}'
//   ctxstore append --context 0123456789abcdef --file reply.bin --codec 0x2
//   produce-output | ctxstore append --context 0123456789abcdef --parent 41
// An identical payload already in the store is not stored again.
#include <iostream>
#include <limits>
#include <optional>
#include <span>
#include <string>

#include "common/input.hpp"
#include "ctxstore/command.hpp"
#include "ctxstore/output.hpp"
#include "ctxstore/store_access.hpp"

namespace ctxstore {
namespace {

struct append_options : writer_options {
  turns::context_id context = 0;
  std::optional<turns::turn_id> parent;
  std::uint64_t type = 0;
  std::uint32_t codec = 0;
  std::optional<std::string> data;
  std::optional<std::string> file;
};

// The payload: --data as given, else the whole of --file or standard input
// ("-" too), read no further than the largest payload the store takes.
agentctx::result<std::string> read_payload(const append_options& o) {
  if (o.data) return *o.data;
  return agentctx_cli::read_input(o.file.value_or("-"), turns::store_options{}.max_payload_bytes);
}

int run_append(const append_options& o) {
  if (o.data && o.file) return usage_error("give at most one of --data S and --file F (neither: standard input)");
  auto payload = read_payload(o);
  if (!payload) return report_error(payload.error());
  return with_writer(o, [&](turns::turn_store& s) {
    turns::append_options options;
    options.parent = o.parent;
    options.type_tag = o.type;
    options.codec = o.codec;
    auto id = s.append(o.context, std::as_bytes(std::span(payload->data(), payload->size())), options);
    if (!id) return report_error(id.error());
    auto appended = s.get_turn(*id);
    if (!appended) return report_error(appended.error());
    if (o.json) {
      return print_json([&](agentctx::json::writer& w) {
        w.begin_object();
        w.key("context").value(turns::to_hex_id(o.context));
        w.key("turn");
        write_turn_json(w, s, *appended);
        w.end_object();
      });
    }
    std::cout << "appended turn " << *id << " to context " << turns::to_hex_id(o.context) << " (parent "
              << appended->parent << ", depth " << appended->depth << ", " << count_of(payload->size(), "byte")
              << ", sha256 " << agentctx::to_hex(appended->payload_hash).substr(0, hash_prefix_digits) << ")\n";
    return static_cast<int>(exit_ok);
  });
}

}  // namespace

void register_append(CLI::App& app, command_table& table) {
  auto [sub, opts] =
      add_command(app, table, "append", "Append a turn to a context (payload from --data, --file or stdin)", run_append);
  sub->add_option("--context", opts->context, "The context (its id: 16 hex digits)")
      ->required()
      ->transform(context_number);
  sub->add_option("--parent", opts->parent, "The new turn's parent (default: the context's head)")
      ->transform(turn_number);
  sub->add_option("--type", opts->type, "The turn's type tag (decimal or 0x-hex; default 0)")
      ->transform(whole_number(0, std::numeric_limits<std::uint64_t>::max(), true));
  sub->add_option("--codec", opts->codec, "The payload's codec tag (decimal or 0x-hex; default 0)")
      ->transform(whole_number(0, std::numeric_limits<std::uint32_t>::max(), true));
  sub->add_option("--data", opts->data, "The payload, as given");
  sub->add_option("--file", opts->file, "Read the payload from this file (- for standard input)");
  add_writer_options(*sub, *opts);
}

}  // namespace ctxstore
