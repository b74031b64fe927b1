// agentctx/core/base64.hpp: base64 (RFC 4648 section 4: the standard
// alphabet A-Z a-z 0-9 + /, with '=' padding), as JSON carries binary payloads.
//
//   std::string text = agentctx::base64_encode(bytes);   // "Zm9vYmFy"
//   auto back = agentctx::base64_decode(text);           // result<std::vector<std::byte>>
//
// Decoding is strict, so that every byte string has exactly one accepted
// text: the length must be a multiple of 4, only alphabet characters may
// appear before the padding, padding is one or two '=' at the very end, and
// the bits the padding leaves over must be zero (RFC 4648 section 3.5). No
// line breaks or white space, no URL-safe alphabet (- and _).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/result.hpp"

namespace agentctx {

namespace detail {

inline constexpr char base64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The 6-bit value of each byte, or 0xFF for bytes outside the alphabet.
inline constexpr std::array<std::uint8_t, 256> base64_values = [] {
  std::array<std::uint8_t, 256> values{};
  values.fill(0xFF);
  for (std::uint8_t i = 0; i < 64; ++i) values[static_cast<unsigned char>(base64_alphabet[i])] = i;
  return values;
}();

}  // namespace detail

/// The base64 text of `bytes`, padded with '=' to a multiple of 4 characters.
inline std::string base64_encode(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t group = std::to_integer<std::uint32_t>(bytes[i]) << 16 |
                                std::to_integer<std::uint32_t>(bytes[i + 1]) << 8 |
                                std::to_integer<std::uint32_t>(bytes[i + 2]);
    out += detail::base64_alphabet[group >> 18];
    out += detail::base64_alphabet[(group >> 12) & 0x3F];
    out += detail::base64_alphabet[(group >> 6) & 0x3F];
    out += detail::base64_alphabet[group & 0x3F];
  }
  const std::size_t left = bytes.size() - i;
  if (left > 0) {
    std::uint32_t group = std::to_integer<std::uint32_t>(bytes[i]) << 16;
    if (left == 2) group |= std::to_integer<std::uint32_t>(bytes[i + 1]) << 8;
    out += detail::base64_alphabet[group >> 18];
    out += detail::base64_alphabet[(group >> 12) & 0x3F];
    out += left == 2 ? detail::base64_alphabet[(group >> 6) & 0x3F] : '=';
    out += '=';
  }
  return out;
}

/// The base64 text of the bytes of `text`.
inline std::string base64_encode(std::string_view text) {
  return base64_encode(std::as_bytes(std::span(text.data(), text.size())));
}

/// The bytes `text` encodes. Errors: invalid_value, with `offset` the index
/// of the first offending character (or the text's length when it is not a
/// multiple of 4 long), for anything but canonical padded base64.
inline result<std::vector<std::byte>> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    return fail(errc::invalid_value,
                "base64 text is " + std::to_string(text.size()) + " characters long, not a multiple of 4", {},
                text.size());
  }
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::vector<std::byte> out;
  out.reserve(text.size() / 4 * 3 - padding);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const std::size_t digits = last ? 4 - padding : 4;
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const std::uint8_t value = k < digits ? detail::base64_values[static_cast<unsigned char>(text[i + k])] : 0;
      if (value == 0xFF) {
        const char c = text[i + k];
        const std::string shown = c == '=' ? "padding '=' before the end"
                                           : (c >= 0x20 && c < 0x7F) ? "character '" + std::string(1, c) + "'"
                                                                     : "byte " + std::to_string(static_cast<unsigned char>(c));
        return fail(errc::invalid_value, "base64 text holds " + shown, {}, i + k);
      }
      group = group << 6 | value;
    }
    // Canonical form: the bits after the last encoded byte are zero.
    if (last && ((padding == 1 && (group & 0xFF) != 0) || (padding == 2 && (group & 0xFFFF) != 0))) {
      return fail(errc::invalid_value, "base64 text has nonzero bits before its padding", {}, i + digits - 1);
    }
    out.push_back(static_cast<std::byte>(group >> 16));
    if (digits > 2) out.push_back(static_cast<std::byte>((group >> 8) & 0xFF));
    if (digits > 3) out.push_back(static_cast<std::byte>(group & 0xFF));
  }
  return out;
}

}  // namespace agentctx
