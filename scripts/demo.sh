#!/usr/bin/env bash
# The main job, end to end on real input: installs what is missing, builds the
# agentsdb and ctxstore CLIs, compiles an AGENTS.db base layer from this
# repository's own documentation, validates it, prints what is inside, and
# searches it; then records a conversation over the same documents in a turn
# store, branches it, and shows paging, deduplication and a full check.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/release"
out="$root/build/demo"

bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DAGENTCTX_BUILD_TESTS=OFF \
  -DAGENTCTX_BUILD_BENCH=OFF -DAGENTCTX_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target agentsdb ctxstore
agentsdb="$build/cli/agentsdb"
ctxstore="$build/cli/ctxstore"
mkdir -p "$out"

echo
echo "\$ agentsdb compile --root . --include 'README.md' --include 'docs/**/*.md' --out build/demo/AGENTS.db"
(cd "$root" && "$agentsdb" compile --root . --include 'README.md' --include 'docs/**/*.md' \
   --out "$out/AGENTS.db")
echo
echo "\$ agentsdb validate build/demo/AGENTS.db"
"$agentsdb" validate "$out/AGENTS.db"
echo
echo "\$ agentsdb inspect build/demo/AGENTS.db"
"$agentsdb" inspect "$out/AGENTS.db"
first_id=$("$agentsdb" inspect "$out/AGENTS.db" --list --limit 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["chunks"][0]["id"])')
echo
echo "\$ agentsdb inspect build/demo/AGENTS.db --id $first_id"
"$agentsdb" inspect "$out/AGENTS.db" --id "$first_id"

# Search the compiled docs. The layer records the hash embedder's profile, so
# the query is embedded the same way (a bag of exact tokens: words of the docs
# match, paraphrases do not); hybrid mode adds BM25 over the contents.
echo
echo "\$ agentsdb search --base build/demo/AGENTS.db --query 'which layer wins when the same chunk id is in two layers' -k 3"
"$agentsdb" search --base "$out/AGENTS.db" --query "which layer wins when the same chunk id is in two layers" -k 3
echo
echo "\$ agentsdb search --base build/demo/AGENTS.db --query 'quantisation scale for i8 embeddings' --mode hybrid -k 3"
"$agentsdb" search --base "$out/AGENTS.db" --query "quantisation scale for i8 embeddings" --mode hybrid -k 3

# The turn store: each documentation file becomes a turn of one conversation;
# a branch from the third turn re-sends README.md, which is stored only once.
store="$out/turns"
rm -rf "$store"
show() {
  echo
  echo "\$ ctxstore $*"
  "$ctxstore" "$@"
}
show init --store "$store"
context=$("$ctxstore" create --store "$store" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo
echo "\$ for f in README.md docs/*.md docs/*/*.md; do ctxstore append --store build/demo/turns --context $context --file \$f; done"
(cd "$root" && for f in README.md docs/*.md docs/*/*.md; do
  "$ctxstore" append --store "$store" --context "$context" --type 1 --file "$f"
done)
show last --store "$store" --context "$context" -n 3
branch=$("$ctxstore" fork --store "$store" --from-turn 3 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo
echo "\$ ctxstore fork --store build/demo/turns --from-turn 3   # context $branch"
show append --store "$store" --context "$branch" --type 1 --file "$root/README.md"
show replay --store "$store" --turn "$("$ctxstore" last --store "$store" --context "$branch" -n 1 --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["turns"][0]["id"])')"
show stats --store "$store"
show fsck --store "$store"
