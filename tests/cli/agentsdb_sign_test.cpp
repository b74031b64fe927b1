// End-to-end tests of `agentsdb keygen`, `sign` and `verify`: the seed 000
// section 15.1 flow (compile, sign, verify), text and JSON output, key files
// that are private and never overwritten by accident, a damaged layer refused,
// every tampering found by verify with exit 1, and usage and I/O errors with
// exit 2 and one line.
#include <doctest/doctest.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace cli_agentsdb_sign_test {

#ifndef AGENTSDB_BIN
TEST_CASE("agentsdb keygen/sign/verify: end-to-end tests") {
  MESSAGE("skipping: AGENTSDB_BIN is not defined (the agentsdb target is not part of this build)");
}
#else

using namespace cli_test;  // agentsdb, check_error, check_clean_success, contains, text_of, ...

namespace {

// A scratch folder holding a valid layer (AGENTS.db) and a key pair (signer.key, signer.key.pub).
struct signing_setup {
  signing_setup() {
    cli_test::write_file(dir.path() + "/AGENTS.md", "# Releases\n\nReleases are cut on Tuesdays.\n");
    check_clean_success(agentsdb({"compile", "--root", ".", "--include", "AGENTS.md", "--out", "AGENTS.db"}, dir.path()));
    check_clean_success(agentsdb({"keygen", "--out", "signer.key"}, dir.path()));
  }
  std::string path(const std::string& name) const { return dir.path() + "/" + name; }
  run_result sign(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"sign", "--in", "AGENTS.db", "--key", "signer.key"};
    args.insert(args.end(), extra.begin(), extra.end());
    return agentsdb(args, dir.path());
  }
  run_result verify(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"verify", "--in", "AGENTS.db", "--pub", "signer.key.pub"};
    args.insert(args.end(), extra.begin(), extra.end());
    return agentsdb(args, dir.path());
  }
  io_test::temporary_directory dir;
};

unsigned mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

/// `text` with the first occurrence of `from` replaced by `to` (which must occur).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "'" << from << "' not in the text");
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("agentsdb keygen: a private key file of mode 0600, a public key file, the key id") {
  io_test::temporary_directory dir;
  const run_result made = agentsdb({"keygen", "--out", "signer.key"}, dir.path());
  check_clean_success(made);
  CHECK(contains(made.out, "wrote private key signer.key (mode 0600, keep it secret) and public key signer.key.pub\n"));
  CHECK(contains(made.out, "\nkey id "));
  CHECK(mode_of(dir.path() + "/signer.key") == 0600);
  const std::string private_text = cli_test::read_file(dir.path() + "/signer.key");
  const std::string public_text = cli_test::read_file(dir.path() + "/signer.key.pub");
  CHECK(private_text.rfind("agentsdb private key\nversion: 1\nalgorithm: ed25519\nkey-id: ", 0) == 0);
  CHECK(public_text.rfind("agentsdb public key\nversion: 1\nalgorithm: ed25519\nkey-id: ", 0) == 0);

  simdjson::dom::parser parser;
  const run_result json = agentsdb({"keygen", "--out", "keys/other", "--pub", "other.pub", "--json"}, dir.path());
  INFO(json.err);
  // keys/ does not exist: an I/O error.
  check_error(json, 2, "keys/");
  std::filesystem::create_directory(dir.path() + "/keys");
  const auto outcome = cli_test::parse_output(
      parser, agentsdb({"keygen", "--out", "keys/other", "--pub", "other.pub", "--json"}, dir.path()));
  const std::string key_id = text_of(outcome, "key_id");
  CHECK(key_id.size() == 16);
  CHECK(text_of(outcome, "private_key") == "keys/other");
  CHECK(text_of(outcome, "public_key") == "other.pub");
  CHECK(contains(cli_test::read_file(dir.path() + "/other.pub"), "key-id: " + key_id + "\n"));
  CHECK(mode_of(dir.path() + "/keys/other") == 0600);
}

TEST_CASE("agentsdb keygen: existing key files are kept unless --force") {
  io_test::temporary_directory dir;
  check_clean_success(agentsdb({"keygen", "--out", "signer.key"}, dir.path()));
  const std::string private_before = cli_test::read_file(dir.path() + "/signer.key");
  const std::string public_before = cli_test::read_file(dir.path() + "/signer.key.pub");

  check_error(agentsdb({"keygen", "--out", "signer.key"}, dir.path()), 2,
              "signer.key: a key file already exists here; it is not overwritten (pass --force to replace it)");
  // Only the public key exists under the new name: nothing is written either.
  check_error(agentsdb({"keygen", "--out", "fresh.key", "--pub", "signer.key.pub"}, dir.path()), 2,
              "signer.key.pub: a key file already exists here");
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/fresh.key"));
  CHECK(cli_test::read_file(dir.path() + "/signer.key") == private_before);
  CHECK(cli_test::read_file(dir.path() + "/signer.key.pub") == public_before);

  check_clean_success(agentsdb({"keygen", "--out", "signer.key", "--force"}, dir.path()));
  CHECK(cli_test::read_file(dir.path() + "/signer.key") != private_before);
  CHECK(cli_test::read_file(dir.path() + "/signer.key.pub") != public_before);
  CHECK(mode_of(dir.path() + "/signer.key") == 0600);
  // No temporary files are left.
  CHECK(cli_test::list_directory(dir.path()) == std::vector<std::string>{"signer.key", "signer.key.pub"});

  // A symbolic link, dangling or not, is an existing file; --force replaces
  // the link itself, never writing a key where it leads.
  std::filesystem::create_symlink("elsewhere.key", dir.path() + "/linked.key");
  check_error(agentsdb({"keygen", "--out", "linked.key"}, dir.path()), 2,
              "linked.key: a symbolic link is here; a key is not written through it (pass --force to replace the link)");
  std::filesystem::create_symlink("signer.key.pub", dir.path() + "/linked.pub");
  check_error(agentsdb({"keygen", "--out", "new.key", "--pub", "linked.pub"}, dir.path()), 2, "linked.pub: a symbolic link");
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/new.key"));
  check_clean_success(agentsdb({"keygen", "--out", "linked.key", "--force"}, dir.path()));
  CHECK_FALSE(std::filesystem::is_symlink(dir.path() + "/linked.key"));
  CHECK(mode_of(dir.path() + "/linked.key") == 0600);
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/elsewhere.key"));

  // One file spelled two ways, and a folder, are refused before anything is
  // written (the public key would replace the private one; half a pair).
  const std::string kept = cli_test::read_file(dir.path() + "/signer.key");
  check_error(agentsdb({"keygen", "--out", "signer.key", "--pub", "./signer.key", "--force"}, dir.path()), 2,
              "signer.key: --out and --pub name the same file (./signer.key)");
  std::filesystem::create_directory(dir.path() + "/d");
  check_error(agentsdb({"keygen", "--out", "d/../signer.key", "--pub", "signer.key", "--force"}, dir.path()), 2,
              "--out and --pub name the same file");
  std::filesystem::create_directory(dir.path() + "/folder.pub");
  check_error(agentsdb({"keygen", "--out", "signer.key", "--pub", "folder.pub", "--force"}, dir.path()), 2,
              "folder.pub: is a folder, not a file");
  CHECK(cli_test::read_file(dir.path() + "/signer.key") == kept);
}

TEST_CASE("agentsdb sign and verify: the seed's CI flow, in text and JSON") {
  const signing_setup s;
  const run_result signed_run = s.sign({"--out", "AGENTS.db.sig"});
  check_clean_success(signed_run);
  CHECK(signed_run.out.rfind("signed AGENTS.db (", 0) == 0);
  const std::string public_key = cli_test::read_file(s.path("signer.key.pub"));
  const std::string key_id = public_key.substr(public_key.find("key-id: ") + 8, 16);
  CHECK(contains(signed_run.out, ") with key " + key_id + ": AGENTS.db.sig\n"));
  CHECK(cli_test::read_file(s.path("AGENTS.db.sig")).rfind("agentsdb layer signature\nversion: 1\n", 0) == 0);

  const run_result verified = s.verify({"--sig", "AGENTS.db.sig"});
  check_clean_success(verified);
  CHECK(verified.out.rfind("AGENTS.db: signature valid (key id ", 0) == 0);

  // --out and --sig default to the layer's path with .sig appended.
  simdjson::dom::parser sign_parser;
  const auto signed_json = cli_test::parse_output(sign_parser, s.sign({"--json"}));
  CHECK(text_of(signed_json, "layer") == "AGENTS.db");
  CHECK(text_of(signed_json, "signature") == "AGENTS.db.sig");
  const std::string layer = cli_test::read_file(s.path("AGENTS.db"));
  CHECK(number_of(signed_json, "layer_size") == layer.size());
  CHECK(text_of(signed_json, "layer_sha256").size() == 64);

  simdjson::dom::parser verify_parser;
  const auto verified_json = cli_test::parse_output(verify_parser, s.verify({"--json"}));
  CHECK(verified_json["valid"].get_bool().value());
  CHECK(text_of(verified_json, "key_id") == text_of(signed_json, "key_id"));
  CHECK(number_of(verified_json, "layer_size") == layer.size());
  CHECK(text_of(verified_json, "layer_sha256") == text_of(signed_json, "layer_sha256"));
  CHECK(text_of(signed_json, "key_id") == key_id);
}

TEST_CASE("agentsdb verify: any mismatch exits 1 with one line naming it") {
  const signing_setup s;
  check_clean_success(s.sign());
  const std::string layer = cli_test::read_file(s.path("AGENTS.db"));
  const std::string signature = cli_test::read_file(s.path("AGENTS.db.sig"));
  check_clean_success(agentsdb({"keygen", "--out", "other.key"}, s.dir.path()));

  struct mismatch_case {
    const char* name;
    std::string layer;
    std::string signature;
    std::string public_key;
    std::string fragment;
  };
  std::string flipped_first = layer;
  flipped_first[0] = static_cast<char>(flipped_first[0] ^ 1);
  std::string flipped_last = layer;
  flipped_last.back() = static_cast<char>(flipped_last.back() ^ 0x40);
  const std::string size_line = "layer-size: " + std::to_string(layer.size());
  const std::size_t signature_at = signature.find("signature: ") + 11;
  std::string edited_signature = signature;
  edited_signature[signature_at] = edited_signature[signature_at] == '0' ? '1' : '0';
  const std::vector<mismatch_case> cases = {
      {"first byte of the layer flipped", flipped_first, signature, "signer.key.pub",
       "AGENTS.db: signature check failed: the layer's SHA-256 is "},
      {"last byte of the layer flipped", flipped_last, signature, "signer.key.pub", "the layer's SHA-256 is "},
      {"layer truncated", layer.substr(0, layer.size() - 1), signature, "signer.key.pub",
       "the layer is " + std::to_string(layer.size() - 1) + " bytes, but the signed layer was " +
           std::to_string(layer.size()) + " bytes"},
      {"layer grown", layer + "x", signature, "signer.key.pub", "bytes, but the signed layer was"},
      {"another key", layer, signature, "other.key.pub", "but the public key is key "},
      {"layer-size edited", layer, replaced(signature, size_line, size_line + "0"), "signer.key.pub",
       "bytes, but the signed layer was " + std::to_string(layer.size()) + "0 bytes"},
      {"signature edited", layer, edited_signature, "signer.key.pub", "the Ed25519 signature does not verify"},
      {"signature file of version 2", layer, replaced(signature, "version: 1", "version: 2"), "signer.key.pub",
       "AGENTS.db.sig: at byte 34: format version 2 is not supported"},
      {"signature file is garbage", layer, "\x01\x02garbage", "signer.key.pub",
       "AGENTS.db.sig: at byte 0: not an agentsdb layer signature file"},
      {"signature file empty", layer, "", "signer.key.pub", "AGENTS.db.sig: at byte 0: empty file"},
      {"the private key given as the public key", layer, signature, "signer.key",
       "signer.key: at byte 0: this is an agentsdb private key file, not an agentsdb public key file"},
  };
  for (const mismatch_case& c : cases) {
    CAPTURE(c.name);
    cli_test::write_file(s.path("AGENTS.db"), c.layer);
    cli_test::write_file(s.path("AGENTS.db.sig"), c.signature);
    check_error(agentsdb({"verify", "--in", "AGENTS.db", "--pub", c.public_key}, s.dir.path()), 1, c.fragment);

    // --json reports the failure on stdout, still with exit 1.
    const run_result json = agentsdb({"verify", "--in", "AGENTS.db", "--pub", c.public_key, "--json"}, s.dir.path());
    CHECK(json.exit_code == 1);
    CHECK(json.err.empty());
    simdjson::dom::parser parser;
    const auto outcome = cli_test::parse_json(parser, json.out);
    CHECK_FALSE(outcome["valid"].get_bool().value());
    CHECK(contains(text_of(outcome["error"].value(), "message"), c.fragment.substr(c.fragment.rfind(": ") + 2)));
    CHECK_FALSE(text_of(outcome["error"].value(), "code").empty());
  }
}

TEST_CASE("agentsdb sign: a damaged layer is refused with exit 1 and no signature is written") {
  const signing_setup s;
  std::string layer = cli_test::read_file(s.path("AGENTS.db"));
  // Byte 24 is the low byte of the header's sections_offset: the section table moves off its place.
  layer[24] = static_cast<char>(0x7f);
  cli_test::write_file(s.path("AGENTS.db"), layer);
  const run_result refused = s.sign();
  check_error(refused, 1, "AGENTS.db: at byte ");
  CHECK(contains(refused.err, "(the layer does not validate; refusing to sign it)"));
  CHECK_FALSE(std::filesystem::exists(s.path("AGENTS.db.sig")));

  cli_test::write_file(s.path("notes.txt"), "just some notes, not a layer");
  check_error(agentsdb({"sign", "--in", "notes.txt", "--key", "signer.key"}, s.dir.path()), 1, "refusing to sign it");
  CHECK_FALSE(std::filesystem::exists(s.path("notes.txt.sig")));
}

TEST_CASE("agentsdb keygen/sign/verify: usage and I/O errors exit 2 with one line") {
  const signing_setup s;
  check_clean_success(s.sign());
  const std::string layer_before = cli_test::read_file(s.path("AGENTS.db"));
  struct bad_case {
    std::vector<std::string> args;
    int exit_code;
    std::string fragment;
  };
  const std::vector<bad_case> cases = {
      {{"keygen"}, 2, "--out is required"},
      {{"sign", "--in", "AGENTS.db"}, 2, "--key is required"},
      {{"sign", "--key", "signer.key"}, 2, "--in is required"},
      {{"verify", "--in", "AGENTS.db"}, 2, "--pub is required"},
      {{"sign", "--in", "AGENTS.db", "--key", "signer.key", "--out", "AGENTS.db"}, 2,
       "the signature file AGENTS.db would overwrite AGENTS.db"},
      {{"sign", "--in", "AGENTS.db", "--key", "signer.key", "--out", "./signer.key"}, 2,
       "the signature file ./signer.key would overwrite signer.key"},
      {{"sign", "--in", "missing.db", "--key", "signer.key"}, 2, "missing.db"},
      {{"sign", "--in", "AGENTS.db", "--key", "missing.key"}, 2, "missing.key"},
      {{"sign", "--in", "AGENTS.db", "--key", "signer.key.pub"}, 1,
       "signer.key.pub: at byte 0: this is an agentsdb public key file, not an agentsdb private key file"},
      {{"sign", "--in", "AGENTS.db", "--key", "signer.key", "--out", "no/such/dir/AGENTS.db.sig"}, 2, "no/such/dir"},
      {{"verify", "--in", "missing.db", "--pub", "signer.key.pub"}, 2, "missing.db"},
      {{"verify", "--in", "AGENTS.db", "--pub", "missing.pub"}, 2, "missing.pub"},
      {{"verify", "--in", "AGENTS.db", "--pub", "signer.key.pub", "--sig", "missing.sig"}, 2, "missing.sig"},
      {{"verify", "--in", "AGENTS.db", "--pub", "signer.key.pub", "--bogus"}, 2, "unexpected argument '--bogus'"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(cli_test::joined(c.args));
    check_error(agentsdb(c.args, s.dir.path()), c.exit_code, c.fragment);
  }
  CHECK(cli_test::read_file(s.path("AGENTS.db")) == layer_before);
  check_clean_success(s.verify());
}

#endif

}  // namespace cli_agentsdb_sign_test
