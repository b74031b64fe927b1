// agentctx/vector/top_k.hpp: keeps the k best-scored items of a stream.
//
// A bounded selector for search results: pushing n scores costs O(n) compares
// plus O(log k) work per score that enters the current best k, with no sort of
// all n scores. Order: a higher score is better; among equal scores the
// smaller payload (operator<) is better, so results do not depend on the order
// of pushes. NaN scores are never selected. -0.0 and 0.0 are equal scores.
//
//   top_k<std::uint32_t> best(10);
//   best.push_scores(scores, first_row);   // many rows, mostly rejected at once
//   for (const scored<std::uint32_t>& hit : best.take_sorted()) ...
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace agentctx::vector {

/// A score with what it scores (a row number, a chunk id...).
template <class Payload>
struct scored {
  float score;
  Payload payload;

  friend bool operator==(const scored&, const scored&) = default;
};

/// The k best (score, payload) pairs pushed so far. Payload must be movable
/// and ordered by operator<. Not thread-safe: use one per thread and merge
/// with push(), or push one thread's take_sorted() into another.
template <class Payload>
class top_k {
 public:
  /// Keeps at most k items. k == 0 keeps nothing. Reserves room for k items
  /// (so it may throw std::bad_alloc; pushes never allocate after that).
  explicit top_k(std::size_t k) : capacity_(k) {
    items_.reserve(k);
    update_threshold();
  }

  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }

  /// The score a new item must reach to be considered: -infinity while fewer
  /// than k items are held, +infinity when k is 0, else the worst held score
  /// (an item with exactly that score enters only with a smaller payload).
  float threshold() const noexcept { return threshold_; }

  /// Offers one item. NaN scores are ignored.
  void push(float score, Payload payload) {
    if (!(score >= threshold_)) return;  // also rejects NaN
    offer(score, std::move(payload));
  }

  /// Offers scores[i] with payload payload_of(i) for every i, calling
  /// payload_of only for the scores that reach threshold(): on a long stream
  /// most scores are rejected by a single compare.
  template <class PayloadOf>
    requires std::invocable<PayloadOf&, std::size_t>
  void push_scores(std::span<const float> scores, PayloadOf&& payload_of) {
    float threshold = threshold_;
    for (std::size_t i = 0; i < scores.size(); ++i) {
      if (!(scores[i] >= threshold)) continue;
      offer(scores[i], payload_of(i));
      threshold = threshold_;
    }
  }

  /// Offers scores[i] with payload first_payload + i for every i (payloads
  /// such as row numbers).
  void push_scores(std::span<const float> scores, Payload first_payload)
    requires std::integral<Payload>
  {
    push_scores(scores, [first_payload](std::size_t i) { return static_cast<Payload>(first_payload + i); });
  }

  /// The items held, best first; leaves the selector empty (same k).
  std::vector<scored<Payload>> take_sorted() {
    std::sort_heap(items_.begin(), items_.end(), better);
    std::vector<scored<Payload>> out = std::move(items_);
    items_ = {};
    items_.reserve(capacity_);
    update_threshold();
    return out;
  }

 private:
  // The heap keeps the worst held item at the front: "better" is the heap's
  // less-than, so its largest element is the worst.
  static bool better(const scored<Payload>& a, const scored<Payload>& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.payload < b.payload;
  }

  void offer(float score, Payload payload) {
    if (items_.size() < capacity_) {
      items_.push_back({score, std::move(payload)});
      std::push_heap(items_.begin(), items_.end(), better);
    } else {
      scored<Payload> candidate{score, std::move(payload)};
      if (capacity_ == 0 || !better(candidate, items_.front())) return;
      std::pop_heap(items_.begin(), items_.end(), better);
      items_.back() = std::move(candidate);
      std::push_heap(items_.begin(), items_.end(), better);
    }
    update_threshold();
  }

  void update_threshold() noexcept {
    if (capacity_ == 0) {
      threshold_ = std::numeric_limits<float>::infinity();
    } else if (items_.size() < capacity_) {
      threshold_ = -std::numeric_limits<float>::infinity();
    } else {
      threshold_ = items_.front().score;
    }
  }

  std::size_t capacity_;
  std::vector<scored<Payload>> items_;
  float threshold_ = 0.0f;
};

}  // namespace agentctx::vector
