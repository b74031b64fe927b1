#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "agentctx/core/endian.hpp"
#include "agentctx/vector/similarity_kernels.hpp"

namespace vector_similarity_kernels_test {

namespace {

using agentctx::vector::instruction_set;
namespace vector = agentctx::vector;

/// Deterministic test data (mt19937_64's raw output is fixed by the standard).
class random_source {
 public:
  explicit random_source(std::uint64_t seed) : engine_(seed) {}
  /// Uniform in [-1, 1).
  float signed_unit() { return static_cast<float>(engine_() >> 40) / 8388608.0f - 1.0f; }
  std::int8_t any_i8() { return static_cast<std::int8_t>(static_cast<std::uint8_t>(engine_())); }

 private:
  std::mt19937_64 engine_;
};

/// The SIMD families this CPU runs; the others are reported as skipped.
std::vector<instruction_set> simd_instruction_sets() {
  std::vector<instruction_set> out;
  for (instruction_set isa : {instruction_set::avx2, instruction_set::avx512}) {
    if (vector::is_supported(isa)) {
      out.push_back(isa);
    } else {
      MESSAGE("skipping " << std::string(vector::to_string(isa)) << ": this CPU does not support it");
    }
  }
  return out;
}

std::vector<std::size_t> tested_dims() {
  std::vector<std::size_t> dims;
  for (std::size_t d = 1; d <= 70; ++d) dims.push_back(d);
  for (std::size_t d : {127, 128, 129, 384, 385, 1536}) dims.push_back(d);
  return dims;
}

constexpr std::size_t max_rows = 9;
constexpr std::size_t max_offset = 3;

/// A row matrix stored at byte `offset` from a 64-byte boundary (offset 0
/// runs the 512-bit kernels, other offsets the 256-bit ones:
/// vector::f32_kernel_for_rows, i8_kernel_for_rows), in an exactly
/// sized buffer, so that any read past the last row is a heap overflow the
/// sanitizers report.
struct stored_matrix {
  struct aligned_delete {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<std::byte[], aligned_delete> bytes;
  std::size_t offset;
  const std::byte* rows() const { return bytes.get() + offset; }
  stored_matrix(std::size_t size, std::size_t at)
      : bytes(static_cast<std::byte*>(::operator new[](std::max<std::size_t>(at + size, 1), std::align_val_t{64}))),
        offset(at) {}
};

stored_matrix store_f32_rows(const std::vector<float>& values, std::size_t offset) {
  stored_matrix m(values.size() * 4, offset);
  for (std::size_t i = 0; i < values.size(); ++i) agentctx::store_f32(m.bytes.get() + offset + i * 4, values[i]);
  return m;
}

stored_matrix store_i8_rows(const std::vector<std::int8_t>& values, std::size_t offset) {
  stored_matrix m(values.size(), offset);
  for (std::size_t i = 0; i < values.size(); ++i) m.bytes[offset + i] = static_cast<std::byte>(values[i]);
  return m;
}

struct f32_results {
  std::vector<float> dots, norms;
};

/// Runs dot_f32_rows with and without norms; checks both runs give the same
/// dots and that nothing is written past row_count.
f32_results run_f32(std::span<const float> query, const stored_matrix& m, std::size_t row_count,
                    instruction_set isa) {
  constexpr float sentinel = 12345.0f;
  f32_results with{std::vector<float>(row_count + 1, sentinel), std::vector<float>(row_count + 1, sentinel)};
  std::vector<float> dots_only(row_count + 1, sentinel);
  vector::dot_f32_rows(query, m.rows(), row_count, with.dots.data(), with.norms.data(), isa);
  vector::dot_f32_rows(query, m.rows(), row_count, dots_only.data(), nullptr, isa);
  CHECK(with.dots.back() == sentinel);
  CHECK(with.norms.back() == sentinel);
  CHECK(dots_only.back() == sentinel);
  for (std::size_t i = 0; i < row_count; ++i) {
    // Same kernel, same summation order: bit-identical (NaN aside).
    if (!std::isnan(with.dots[i])) CHECK(dots_only[i] == with.dots[i]);
  }
  with.dots.pop_back();
  with.norms.pop_back();
  return with;
}

struct i8_results {
  std::vector<std::int32_t> dots, norms;
};

i8_results run_i8(std::span<const std::int8_t> query, const stored_matrix& m, std::size_t row_count,
                  instruction_set isa) {
  constexpr std::int32_t sentinel = 0x5EED;
  i8_results with{std::vector<std::int32_t>(row_count + 1, sentinel),
                  std::vector<std::int32_t>(row_count + 1, sentinel)};
  std::vector<std::int32_t> dots_only(row_count + 1, sentinel);
  vector::dot_i8_rows(query, m.rows(), row_count, with.dots.data(), with.norms.data(), isa);
  vector::dot_i8_rows(query, m.rows(), row_count, dots_only.data(), nullptr, isa);
  CHECK(with.norms.back() == sentinel);
  CHECK(dots_only == with.dots);
  with.dots.pop_back();
  with.norms.pop_back();
  return with;
}

/// Tolerance for f32 results: 1e-5 of the sum of |products|, the scale of the
/// rounding error whatever the order of the additions.
double tolerance(std::span<const float> a, std::span<const float> b) {
  double magnitude = 0.0;
  for (std::size_t j = 0; j < a.size(); ++j) magnitude += std::fabs(double{a[j]} * double{b[j]});
  return 1e-5 * magnitude + 1e-30;
}

}  // namespace

TEST_CASE("instruction sets: names, detection and capping") {
  CHECK(vector::to_string(instruction_set::portable) == "portable");
  CHECK(vector::to_string(instruction_set::avx2) == "avx2");
  CHECK(vector::to_string(instruction_set::avx512) == "avx512");
  CHECK(vector::is_supported(instruction_set::portable));
  CHECK(vector::best_instruction_set() <= vector::detected_instruction_set());
  CHECK(vector::is_supported(vector::best_instruction_set()));
  MESSAGE("detected " << std::string(vector::to_string(vector::detected_instruction_set())) << ", using "
                      << std::string(vector::to_string(vector::best_instruction_set())));
}

TEST_CASE("dot_f32_rows: every instruction set matches the portable kernel and a double reference") {
  const std::vector<instruction_set> simd = simd_instruction_sets();
  random_source random(1);
  for (std::size_t dim : tested_dims()) {
    std::vector<float> query(dim);
    for (float& q : query) q = random.signed_unit();
    std::vector<float> values(max_rows * dim);
    for (float& v : values) v = random.signed_unit() * 4.0f;
    for (std::size_t offset = 0; offset <= max_offset; ++offset) {
      const stored_matrix m = store_f32_rows(values, offset);
      for (std::size_t row_count = 0; row_count <= max_rows; ++row_count) {
        CAPTURE(dim);
        CAPTURE(offset);
        CAPTURE(row_count);
        const f32_results portable = run_f32(query, m, row_count, instruction_set::portable);
        for (std::size_t i = 0; i < row_count; ++i) {
          const std::span<const float> row(values.data() + i * dim, dim);
          double dot = 0.0, norm = 0.0;
          for (std::size_t j = 0; j < dim; ++j) {
            dot += double{query[j]} * row[j];
            norm += double{row[j]} * row[j];
          }
          CHECK(std::fabs(portable.dots[i] - dot) <= tolerance(query, row));
          CHECK(std::fabs(portable.norms[i] - norm) <= tolerance(row, row));
        }
        for (instruction_set isa : simd) {
          CAPTURE(std::string(vector::to_string(isa)));
          const f32_results got = run_f32(query, m, row_count, isa);
          for (std::size_t i = 0; i < row_count; ++i) {
            const std::span<const float> row(values.data() + i * dim, dim);
            CHECK(std::fabs(got.dots[i] - portable.dots[i]) <= tolerance(query, row));
            CHECK(std::fabs(got.norms[i] - portable.norms[i]) <= tolerance(row, row));
          }
        }
      }
    }
  }
}

TEST_CASE("dot_f32_rows: extreme and special values") {
  constexpr float not_a_number = std::numeric_limits<float>::quiet_NaN();
  constexpr float infinity = std::numeric_limits<float>::infinity();
  constexpr float denormal = std::numeric_limits<float>::denorm_min();
  struct row {
    const char* name;
    float query_value;
    float row_value;
    std::size_t special_at;  ///< the one position holding row_value; others are 1
    float expected_dot;      ///< for dim 37 (36 ones plus the special product)
  };
  const row rows[] = {
      {"large but finite products", 1e18f, 1e18f, 36, 36.0f * 1e18f + 1e36f},
      {"denormal product", 1.0f, denormal, 0, 36.0f},
      {"NaN propagates", 1.0f, not_a_number, 20, not_a_number},
      {"infinity propagates", 1.0f, infinity, 35, infinity},
      {"-infinity propagates", 1.0f, -infinity, 3, -infinity},
  };
  constexpr std::size_t dim = 37;
  std::vector<instruction_set> isas = simd_instruction_sets();
  isas.push_back(instruction_set::portable);
  for (const row& r : rows) {
    CAPTURE(std::string(r.name));
    std::vector<float> query(dim, 1.0f), values(dim, 1.0f);
    query[r.special_at] = r.query_value;
    values[r.special_at] = r.row_value;
    const stored_matrix m = store_f32_rows(values, 1);
    for (instruction_set isa : isas) {
      CAPTURE(std::string(vector::to_string(isa)));
      float dot = 0.0f;
      vector::dot_f32_rows(query, m.rows(), 1, &dot, nullptr, isa);
      if (std::isnan(r.expected_dot)) {
        CHECK(std::isnan(dot));
      } else if (std::isinf(r.expected_dot)) {
        CHECK(dot == r.expected_dot);
      } else {
        CHECK(dot == doctest::Approx(r.expected_dot).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("dot_f32_rows and dot_i8_rows: an empty query scores every row 0") {
  for (instruction_set isa : {instruction_set::portable, instruction_set::avx2, instruction_set::avx512}) {
    float dots[3] = {1, 2, 3}, norms[3] = {1, 2, 3};
    vector::dot_f32_rows({}, nullptr, 2, dots, norms, isa);
    CHECK(dots[0] == 0.0f);
    CHECK(norms[1] == 0.0f);
    CHECK(dots[2] == 3.0f);
    std::int32_t int_dots[3] = {1, 2, 3};
    vector::dot_i8_rows({}, nullptr, 2, int_dots, nullptr, isa);
    CHECK(int_dots[0] == 0);
    CHECK(int_dots[1] == 0);
    CHECK(int_dots[2] == 3);
  }
}

TEST_CASE("dot_i8_rows: every instruction set equals the portable kernel and an exact reference") {
  const std::vector<instruction_set> simd = simd_instruction_sets();
  random_source random(2);
  // Random bytes, then the extremes, where a signed/unsigned mix-up or a
  // saturating instruction would show.
  enum class fill { random, all_minimum, all_maximum, alternating_extremes };
  for (fill pattern : {fill::random, fill::all_minimum, fill::all_maximum, fill::alternating_extremes}) {
    for (std::size_t dim : tested_dims()) {
      std::vector<std::int8_t> query(dim), values(max_rows * dim);
      for (std::size_t j = 0; j < dim; ++j) {
        query[j] = pattern == fill::random           ? random.any_i8()
                   : pattern == fill::all_maximum    ? std::int8_t{127}
                   : pattern == fill::all_minimum    ? std::int8_t{-128}
                   : j % 2 == 0                      ? std::int8_t{-128}
                                                     : std::int8_t{127};
      }
      for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = pattern == fill::random           ? random.any_i8()
                    : pattern == fill::all_maximum    ? std::int8_t{127}
                    : pattern == fill::all_minimum    ? std::int8_t{-128}
                    : (i / 3) % 2 == 0                ? std::int8_t{-128}
                                                      : std::int8_t{127};
      }
      for (std::size_t offset = 0; offset <= max_offset; ++offset) {
        const stored_matrix m = store_i8_rows(values, offset);
        for (std::size_t row_count = 0; row_count <= max_rows; ++row_count) {
          CAPTURE(static_cast<int>(pattern));
          CAPTURE(dim);
          CAPTURE(offset);
          CAPTURE(row_count);
          const i8_results portable = run_i8(query, m, row_count, instruction_set::portable);
          for (std::size_t i = 0; i < row_count; ++i) {
            std::int64_t dot = 0, norm = 0;
            for (std::size_t j = 0; j < dim; ++j) {
              dot += std::int64_t{query[j]} * values[i * dim + j];
              norm += std::int64_t{values[i * dim + j]} * values[i * dim + j];
            }
            CHECK(portable.dots[i] == dot);
            CHECK(portable.norms[i] == norm);
          }
          for (instruction_set isa : simd) {
            CAPTURE(std::string(vector::to_string(isa)));
            const i8_results got = run_i8(query, m, row_count, isa);
            CHECK(got.dots == portable.dots);
            CHECK(got.norms == portable.norms);
          }
        }
      }
    }
  }
}

TEST_CASE("dot_i8_rows: sums too large for 32 bits wrap identically on every instruction set") {
  constexpr std::size_t dim = 140'000;  // 140,000 * 16,384 > 2^31
  const std::vector<std::int8_t> query(dim, -128);
  const stored_matrix m = store_i8_rows(std::vector<std::int8_t>(2 * dim, -128), 3);
  const i8_results portable = run_i8(query, m, 2, instruction_set::portable);
  const auto wrapped = static_cast<std::int32_t>(static_cast<std::uint32_t>(dim * 16'384));
  CHECK(portable.dots[0] == wrapped);
  CHECK(portable.norms[1] == wrapped);
  for (instruction_set isa : simd_instruction_sets()) {
    CAPTURE(std::string(vector::to_string(isa)));
    const i8_results got = run_i8(query, m, 2, isa);
    CHECK(got.dots == portable.dots);
    CHECK(got.norms == portable.norms);
  }
}

TEST_CASE("quantize_query_i8") {
  constexpr float not_a_number = std::numeric_limits<float>::quiet_NaN();
  constexpr float infinity = std::numeric_limits<float>::infinity();
  struct row {
    const char* name;
    std::vector<float> query;
    float expected_scale;
    std::vector<std::int8_t> expected;
  };
  const std::vector<row> rows = {
      {"empty", {}, 0.0f, {}},
      {"zero vector", {0.0f, -0.0f, 0.0f}, 0.0f, {0, 0, 0}},
      {"largest maps to 127, halves round away from zero", {1.0f, -0.5f, 0.25f}, 1.0f / 127.0f, {127, -64, 32}},
      {"negative largest maps to -127", {-2.0f, 1.0f, 0.0f}, 2.0f / 127.0f, {-127, 64, 0}},
      {"NaN becomes 0, infinities clamp, neither sets the scale",
       {not_a_number, infinity, -infinity, 0.5f},
       0.5f / 127.0f,
       {0, 127, -127, 127}},
      {"only non-finite values", {not_a_number, infinity}, 0.0f, {0, 0}},
  };
  for (const row& r : rows) {
    CAPTURE(std::string(r.name));
    std::vector<std::int8_t> out(r.query.size(), 99);
    const float scale = vector::quantize_query_i8(r.query, out);
    CHECK(scale == doctest::Approx(r.expected_scale));
    CHECK(out == r.expected);
  }

  SUBCASE("a scale that would underflow is the smallest positive float") {
    const std::vector<float> query = {std::numeric_limits<float>::denorm_min(), 0.0f};
    std::vector<std::int8_t> out(2);
    const float scale = vector::quantize_query_i8(query, out);
    CHECK(scale > 0.0f);
    CHECK(out[0] == 1);
    CHECK(out[1] == 0);
  }
  SUBCASE("an output longer than the query is zero-filled, a shorter one truncated") {
    const std::vector<float> query = {0.5f, -1.0f};
    std::vector<std::int8_t> longer(4, 99);
    CHECK(vector::quantize_query_i8(query, longer) == doctest::Approx(1.0f / 127.0f));
    CHECK(longer == std::vector<std::int8_t>{64, -127, 0, 0});
    std::vector<std::int8_t> shorter(1, 99);
    CHECK(vector::quantize_query_i8(query, shorter) == doctest::Approx(1.0f / 127.0f));
    CHECK(shorter == std::vector<std::int8_t>{64});
  }
  SUBCASE("scale * row scale * integer dot approximates the f32 dot product") {
    random_source random(3);
    constexpr std::size_t dim = 384;
    std::vector<float> query(dim), row(dim);
    for (float& q : query) q = random.signed_unit();
    for (float& v : row) v = random.signed_unit();
    std::vector<std::int8_t> quantised_query(dim), quantised_row(dim);
    const float query_scale = vector::quantize_query_i8(query, quantised_query);
    const float row_scale = vector::quantize_query_i8(row, quantised_row);
    const stored_matrix m = store_i8_rows(quantised_row, 0);
    std::int32_t int_dot = 0;
    vector::dot_i8_rows(quantised_query, m.rows(), 1, &int_dot, nullptr);
    double exact = 0.0, magnitude = 0.0;
    for (std::size_t j = 0; j < dim; ++j) {
      exact += double{query[j]} * row[j];
      magnitude += std::fabs(double{query[j]} * row[j]);
    }
    // Each value is off by at most half a step (1/254 of the largest).
    CHECK(std::fabs(double{query_scale} * row_scale * int_dot - exact) <= 0.01 * magnitude);
  }
}

TEST_CASE("kernel choice: 512-bit vectors only for rows on a 64-byte boundary") {
  using agentctx::vector::f32_kernel_for_rows;
  using agentctx::vector::i8_kernel_for_rows;
  using agentctx::vector::instruction_set;
  using agentctx::vector::is_supported;
  using agentctx::vector::kernel_choice;
  alignas(64) std::byte buffer[128] = {};
  const kernel_choice portable{instruction_set::portable, 0};
  const kernel_choice avx2{instruction_set::avx2, 256};
  for (const std::byte* rows : {buffer + 0, buffer + 3}) {
    CHECK(f32_kernel_for_rows(instruction_set::portable, rows) == portable);
    CHECK(i8_kernel_for_rows(instruction_set::portable, rows) == portable);
  }
  if (!is_supported(instruction_set::avx2)) {
    MESSAGE("this CPU has no AVX2: only the portable choice is checked");
    CHECK(f32_kernel_for_rows(instruction_set::avx512, buffer) == portable);
    return;
  }
  for (const std::byte* rows : {buffer + 0, buffer + 3}) {
    CHECK(f32_kernel_for_rows(instruction_set::avx2, rows) == avx2);
    CHECK(i8_kernel_for_rows(instruction_set::avx2, rows) == avx2);
  }
  if (!is_supported(instruction_set::avx512)) {
    MESSAGE("this CPU has no AVX-512: asking for it gives AVX2");
    CHECK(f32_kernel_for_rows(instruction_set::avx512, buffer) == avx2);
    CHECK(i8_kernel_for_rows(instruction_set::avx512, buffer) == avx2);
    return;
  }
  const kernel_choice avx512{instruction_set::avx512, 512};
  const kernel_choice avx512_256{instruction_set::avx512, 256};
  for (const std::byte* rows : {buffer + 0, buffer + 64}) {
    CHECK(f32_kernel_for_rows(instruction_set::avx512, rows) == avx512);
    CHECK(i8_kernel_for_rows(instruction_set::avx512, rows) == avx512);
  }
  for (std::size_t offset : {1, 3, 4, 16, 32, 63}) {
    CAPTURE(offset);
    CHECK(f32_kernel_for_rows(instruction_set::avx512, buffer + offset) == avx2);
    CHECK(i8_kernel_for_rows(instruction_set::avx512, buffer + offset) == avx512_256);
  }
}

}  // namespace vector_similarity_kernels_test
