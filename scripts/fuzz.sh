#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time and reports how many
# executions ran clean. Usage:
#   scripts/fuzz.sh [--build DIR] [--seconds N] [--jobs J] [TARGET...]
# DIR must be a build configured with -DCMAKE_CXX_COMPILER=clang++
# -DAGENTCTX_BUILD_FUZZERS=ON (default: build/fuzz). Seed inputs come from
# fuzz/seeds/<target>/ when present; the working corpus goes to DIR/corpus/.
# J targets run at once (default: the machine's cores), each for N seconds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/fuzz"
seconds=60
jobs=$(nproc)
targets=()
while (( $# )); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if (( ${#targets[@]} == 0 )); then
  for f in "$root"/fuzz/*_fuzz.cpp; do
    [[ -e "$f" ]] && targets+=("$(basename "$f" .cpp)")
  done
fi
if (( ${#targets[@]} == 0 )); then
  echo "fuzz.sh: no fuzz targets" >&2
  exit 1
fi

for t in "${targets[@]}"; do
  [[ -x "$build/fuzz/$t" ]] || { echo "fuzz.sh: $build/fuzz/$t not built" >&2; exit 2; }
done

# Runs one target; returns non-zero when it found a problem.
run_target() {
  local t=$1
  local bin="$build/fuzz/$t"
  local corpus="$build/corpus/$t"
  mkdir -p "$corpus"
  local seeds=()
  [[ -d "$root/fuzz/seeds/$t" ]] && seeds+=("$root/fuzz/seeds/$t")
  local dict=()
  [[ -f "$root/fuzz/$t.dict" ]] && dict=(-dict="$root/fuzz/$t.dict")
  local log="$build/$t.log"
  # -timeout: an input that takes more than 30 s is a hang, reported as a failure
  # instead of stalling the run until libFuzzer's 20-minute default.
  if "$bin" -max_total_time="$seconds" -timeout=30 -print_final_stats=1 -rss_limit_mb=2048 \
       -artifact_prefix="$build/$t-" "${dict[@]}" "$corpus" "${seeds[@]}" >"$log" 2>&1; then
    local runs
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
    echo "fuzz: $t ran clean for ${seconds}s: $runs executions"
  else
    # One write, so that the lines of targets running at once do not mix.
    printf 'fuzz: %s FAILED; last lines of %s:\n%s\n' "$t" "$log" "$(tail -n 40 "$log")" >&2
    return 1
  fi
}

status=0
running=0
for t in "${targets[@]}"; do
  run_target "$t" &
  running=$((running + 1))
  if (( running >= jobs )); then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while (( running > 0 )); do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
