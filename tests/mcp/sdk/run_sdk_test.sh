#!/usr/bin/env bash
# Runs an end-to-end test of an MCP server with the official MCP TypeScript
# SDK client: SCRIPT (default sdk_client_test.mjs, the test of `agentsdb
# serve`; relay_sdk_client_test.mjs tests `relay serve`) against the binary
# given as the first argument. Exits 77 (ctest: skipped) with a message when
# node or the SDK is missing; scripts/test.sh installs the SDK here with
# `npm ci`.
#   run_sdk_test.sh BINARY [SCRIPT]
set -euo pipefail
binary=$1
script=${2:-sdk_client_test.mjs}
here=${BASH_SOURCE[0]%/*}
[[ "$here" == "${BASH_SOURCE[0]}" ]] && here=.
here=$(cd "$here" && pwd)
if ! command -v node >/dev/null 2>&1; then
  echo "skipping the MCP SDK test: node is not installed (scripts/setup.sh installs nodejs and npm)"
  exit 77
fi
if [[ ! -f "$here/node_modules/@modelcontextprotocol/sdk/package.json" ]]; then
  echo "skipping the MCP SDK test: the SDK is not installed in $here (run 'npm ci' there; scripts/test.sh does)"
  exit 77
fi
exec node "$here/$script" "$binary"
