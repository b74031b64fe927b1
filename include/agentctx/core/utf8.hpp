// agentctx/core/utf8.hpp: UTF-8 validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <simdjson.h>

namespace agentctx {

/// Returns the byte index of the first invalid UTF-8 sequence in `text`, or
/// text.size() when all of it is valid. Rejects overlong forms, surrogates
/// (U+D800..U+DFFF) and code points above U+10FFFF, as RFC 3629 requires.
inline std::size_t find_invalid_utf8(std::string_view text) noexcept {
  // Valid text is the common case: simdjson's validator (SIMD, runtime
  // dispatch) confirms it at several GB/s; only invalid text takes the scalar
  // walk below, which also finds the position.
  if (text.empty() || simdjson::validate_utf8(text.data(), text.size())) return text.size();
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII fast path, eight bytes at a time.
    if (i + 8 <= n) {
      std::uint64_t word;
      std::memcpy(&word, s + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + len > n) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
    }
    i += len;
  }
  return n;
}

/// The code point starting at text[i] and, in `length`, its size in bytes;
/// 0xFFFFFFFF and length 1 for a byte that does not start a well-formed
/// sequence (overlong forms and surrogates are decoded as they are: use
/// find_invalid_utf8 to validate).
inline std::uint32_t decode_utf8_at(std::string_view text, std::size_t i, std::size_t& length) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  length = 1;
  if (lead < 0x80) return lead;
  std::size_t count = 0;
  std::uint32_t cp = 0;
  if ((lead & 0xE0) == 0xC0) {
    count = 2;
    cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    count = 3;
    cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    count = 4;
    cp = lead & 0x07;
  } else {
    return 0xFFFFFFFF;
  }
  if (i + count > text.size()) return 0xFFFFFFFF;
  for (std::size_t k = 1; k < count; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0xFFFFFFFF;
    cp = cp << 6 | (byte(i + k) & 0x3F);
  }
  length = count;
  return cp;
}

/// True when `text` is entirely valid UTF-8.
inline bool is_valid_utf8(std::string_view text) noexcept { return find_invalid_utf8(text) == text.size(); }

}  // namespace agentctx
