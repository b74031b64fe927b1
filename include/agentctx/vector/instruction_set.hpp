// agentctx/vector/instruction_set.hpp: which SIMD kernels this CPU can run.
//
// The library is compiled for the baseline target (no -mavx2): the kernels
// that use AVX2 or AVX-512 carry per-function target attributes and are only
// called after best_instruction_set() has confirmed at run time that the CPU
// (and the operating system, which must save the wider registers) has them.
// On other architectures, and with compilers that lack GNU target
// attributes, only the portable kernels exist.
#pragma once

#include <cstdlib>
#include <string_view>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define AGENTCTX_VECTOR_X86 1
#else
#define AGENTCTX_VECTOR_X86 0
#endif

namespace agentctx::vector {

/// A family of similarity kernels, from the most portable to the widest.
/// The order is meaningful: a CPU that runs one runs every smaller one.
enum class instruction_set {
  portable,  ///< plain C++, any CPU; the reference the others are tested against
  avx2,      ///< x86 AVX2 + FMA (Haswell, Zen 1 and later)
  avx512,    ///< x86 AVX-512 F/BW/VL/VNNI (Ice Lake, Zen 4 and later)
};

/// Stable lowercase name: "portable", "avx2" or "avx512" (the values
/// AGENTCTX_ISA accepts).
constexpr std::string_view to_string(instruction_set isa) noexcept {
  switch (isa) {
    case instruction_set::portable: return "portable";
    case instruction_set::avx2: return "avx2";
    case instruction_set::avx512: return "avx512";
  }
  return "unknown";
}

/// The widest instruction set this CPU and operating system support, ignoring
/// AGENTCTX_ISA. Detected once; cheap after the first call.
inline instruction_set detected_instruction_set() noexcept {
#if AGENTCTX_VECTOR_X86
  static const instruction_set detected = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni")) {
      return instruction_set::avx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return instruction_set::avx2;
    return instruction_set::portable;
  }();
  return detected;
#else
  return instruction_set::portable;
#endif
}

/// True when kernels of `isa` can run here.
inline bool is_supported(instruction_set isa) noexcept { return isa <= detected_instruction_set(); }

/// The instruction set the kernels use by default: detected_instruction_set(),
/// lowered to the value of the environment variable AGENTCTX_ISA when that is
/// "portable", "avx2" or "avx512" (a request above what the CPU has is capped
/// to what it has; any other value is ignored). Read once, on the first call:
/// set the variable before the process starts using the kernels.
inline instruction_set best_instruction_set() noexcept {
  static const instruction_set best = [] {
    const instruction_set detected = detected_instruction_set();
    const char* requested = std::getenv("AGENTCTX_ISA");
    if (requested == nullptr) return detected;
    for (instruction_set isa : {instruction_set::portable, instruction_set::avx2, instruction_set::avx512}) {
      if (to_string(isa) == requested) return isa < detected ? isa : detected;
    }
    return detected;
  }();
  return best;
}

}  // namespace agentctx::vector
