#!/usr/bin/env bash
# Installs the Debian 12 packages agentctx needs to build, test and benchmark.
# Idempotent: packages already present are not reinstalled, and the package
# lists are refreshed only when something is missing. Run as root (or with sudo).
set -euo pipefail

packages=(
  # toolchain
  cmake make g++ clang libclang-rt-14-dev llvm
  # library dependencies
  libsimdjson-dev libzstd-dev libssl-dev zlib1g-dev
  # tests and command-line tools
  doctest-dev libcli11-dev python3
)
# The MCP SDK end-to-end test (tests/mcp/sdk) needs node and npm; any
# installation will do, so Debian's are added only when either is missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi
if [[ "${1:-}" == "--bench-extras" ]]; then
  packages+=(libbenchmark-dev libfaiss-dev sqlite3 libsqlite3-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} == 0 )); then
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 2; }
  sudo_cmd=(sudo)
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
