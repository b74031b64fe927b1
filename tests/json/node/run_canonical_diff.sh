#!/usr/bin/env bash
# Runs the differential test of canonical JSON against node: the driver (the
# canonical_node_driver binary given as the first argument) generates
# documents or doubles and our output for them, canonical_diff.mjs compares
# with the npm package `canonicalize` and String(x). Usage:
#   run_canonical_diff.sh DRIVER documents|numbers [COUNT [SEED]]
# Exits 77 (ctest: skipped) with a message when node or `canonicalize` is
# missing; scripts/test.sh installs the package here with `npm ci`.
set -euo pipefail
driver=$1
shift
here=${BASH_SOURCE[0]%/*}
[[ "$here" == "${BASH_SOURCE[0]}" ]] && here=.
here=$(cd "$here" && pwd)
if ! command -v node >/dev/null 2>&1; then
  echo "skipping the canonical JSON test against node: node is not installed (scripts/setup.sh installs nodejs and npm)"
  exit 77
fi
if [[ ! -f "$here/node_modules/canonicalize/package.json" ]]; then
  echo "skipping the canonical JSON test against node: canonicalize is not installed in $here" \
       "(run 'npm ci' there; scripts/test.sh does)"
  exit 77
fi
"$driver" "$@" | node "$here/canonical_diff.mjs"
