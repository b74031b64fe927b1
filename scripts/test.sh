#!/usr/bin/env bash
# Runs the whole agentctx test suite from a clean checkout:
#   1. installs what is missing (scripts/setup.sh),
#   2. GCC build, warnings as errors: unit tests, CLI tests, link and consumer
#      tests, the tests against node (the MCP SDK end-to-end test and canonical
#      JSON against `canonicalize`; their npm packages are installed with
#      `npm ci` into tests/mcp/sdk and tests/json/node), and every benchmark
#      once on small input,
#   3. clang build with AddressSanitizer + UndefinedBehaviorSanitizer: the same
#      tests again (all but the benchmarks' smoke runs),
#   4. every libFuzzer target for a bounded time (AGENTCTX_FUZZ_SECONDS, default 10).
# Exits non-zero on the first failure. Build folders live under build/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
fuzz_seconds=${AGENTCTX_FUZZ_SECONDS:-10}
started=$SECONDS
passed=0
failed=0

step() { printf '\n== %s (%ds elapsed)\n' "$*" $((SECONDS - started)); }

run_ctest() {
  local dir=$1; shift
  local log
  log=$(mktemp)
  set +e
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  set -e
  local line total bad
  line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  bad=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
  rm -f "$log"
  if [[ -z "$line" ]]; then
    echo "test.sh: ctest in $dir ran no tests" >&2
    exit 1
  fi
  passed=$((passed + total - bad))
  failed=$((failed + bad))
  if [[ $rc -ne 0 ]]; then
    echo "test.sh: failures in $dir" >&2
    echo "$passed passed, $failed failed"
    exit 1
  fi
}

step "installing dependencies"
bash "$root/scripts/setup.sh"

step "npm packages for the tests against node (npm ci in tests/mcp/sdk and tests/json/node)"
if command -v npm >/dev/null 2>&1; then
  for dir in tests/mcp/sdk tests/json/node; do
    (cd "$root/$dir" && npm ci --no-audit --no-fund --loglevel=error)
  done
else
  echo "test.sh: npm is missing, so the tests against node (MCP SDK, canonical JSON) will be skipped" >&2
fi

step "GCC build (warnings are errors)"
# -O1 without debug info: the warnings that need the optimiser still fire,
# and the build takes half the time of -O2 -g on the 2-core CI machine. A
# unity build (each tool's and each test module's files compiled together,
# all of them in one batch: the relay tool's 22 files in two batches took 86 s
# of CPU, in one 37 s) compiles the header-only library once per target
# instead of once per file. The largest batch (test_agdb's 28 files) needs
# about 2 GB of memory.
unity=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=64)
cmake -S "$root" -B "$root/build/gcc" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DAGENTCTX_WERROR=ON "${unity[@]}" >/dev/null
cmake --build "$root/build/gcc" -j"$jobs"
step "tests (GCC)"
run_ctest "$root/build/gcc"

step "clang build with ASan + UBSan"
# -O0 with line tables (enough for file:line in sanitizer reports) builds
# about 2.5 times faster than -O1 -g; the tests run a little slower. The
# benchmarks are built and run once by the GCC stage, not again here.
cmake -S "$root" -B "$root/build/asan" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -gline-tables-only" -DAGENTCTX_SANITIZE=ON -DAGENTCTX_WERROR=ON -DAGENTCTX_BUILD_EXAMPLES=OFF \
  -DAGENTCTX_BUILD_BENCH=OFF "${unity[@]}" >/dev/null
cmake --build "$root/build/asan" -j"$jobs"
step "tests (ASan + UBSan)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The consumer test builds a separate project without sanitizers; GCC covered it.
run_ctest "$root/build/asan" -E '^consumer$'

step "fuzzing (${fuzz_seconds}s per target)"
# The 10-second smoke run needs no optimiser: -O0 builds the targets in less
# than half the time of the default -O1 -g (AGENTCTX_FUZZ_FLAGS).
cmake -S "$root" -B "$root/build/fuzz" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_DEBUG= -DAGENTCTX_FUZZ_FLAGS="-O0 -gline-tables-only" -DAGENTCTX_BUILD_FUZZERS=ON -DAGENTCTX_BUILD_TESTS=OFF -DAGENTCTX_BUILD_BENCH=OFF \
  -DAGENTCTX_BUILD_EXAMPLES=OFF -DAGENTCTX_BUILD_CLI=OFF >/dev/null
cmake --build "$root/build/fuzz" -j"$jobs"
if bash "$root/scripts/fuzz.sh" --build "$root/build/fuzz" --seconds "$fuzz_seconds"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  echo "$passed passed, $failed failed"
  exit 1
fi

step "done"
echo "$passed passed, $failed failed"
