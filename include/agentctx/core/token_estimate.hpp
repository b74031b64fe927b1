// agentctx/core/token_estimate.hpp: a deterministic, vocabulary-free estimate
// of how many tokens a language model's tokenizer makes of a text, for
// budgets that must not depend on a model ("agentctx-tokens-v1").
//
// The rule, over the UTF-8 code points of the text:
//   - white space separates pieces and costs nothing;
//   - every ASCII punctuation or symbol character is one token;
//   - every CJK ideograph, kana or hangul syllable is one token;
//   - a run of other characters (letters, digits, other scripts) of n code
//     points costs ceil(n / 6) tokens, at least 1;
//   - bytes that are not valid UTF-8 cost one token each.
// On English prose and code this lands within about 10% of byte-pair
// tokenizers' counts; it is an estimate for budgets, not a tokenizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agentctx/core/utf8.hpp"

namespace agentctx {

/// The name reported beside counts made by estimate_tokens().
inline constexpr std::string_view token_estimator_name = "agentctx-tokens-v1";

namespace detail {

inline bool is_cjk(std::uint32_t cp) noexcept {
  return (cp >= 0x3040 && cp <= 0x30FF) ||    // kana
         (cp >= 0x3400 && cp <= 0x4DBF) ||    // CJK extension A
         (cp >= 0x4E00 && cp <= 0x9FFF) ||    // CJK unified ideographs
         (cp >= 0xAC00 && cp <= 0xD7AF) ||    // hangul syllables
         (cp >= 0xF900 && cp <= 0xFAFF) ||    // compatibility ideographs
         (cp >= 0x20000 && cp <= 0x3FFFF);    // supplementary ideographs
}

}  // namespace detail

/// The agentctx-tokens-v1 estimate of `text` (see the file comment).
inline std::size_t estimate_tokens(std::string_view text) noexcept {
  std::size_t tokens = 0;
  std::size_t run = 0;  // code points of the current word
  const auto end_run = [&] {
    if (run > 0) tokens += (run + 5) / 6;
    run = 0;
  };
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 1;
    const std::uint32_t cp = decode_utf8_at(text, i, length);
    i += length;
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == '\f' || cp == '\v') {
      end_run();
    } else if (cp < 0x80 && !((cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z'))) {
      end_run();
      ++tokens;  // punctuation, symbols, control characters
    } else if (cp == 0xFFFFFFFF || detail::is_cjk(cp)) {
      end_run();
      ++tokens;
    } else {
      ++run;
    }
  }
  end_run();
  return tokens;
}

}  // namespace agentctx
