#!/usr/bin/env bash
# The main job, end to end on real input: installs what is missing, builds the
# agentsdb and ctxstore CLIs, compiles an AGENTS.db base layer from this
# repository's own documentation, validates it, prints what is inside, and
# searches it; then records a conversation over the same documents in a turn
# store, branches it, and shows paging, deduplication and a full check; then
# deposits each documentation page as a Context Package in a Relay store and
# pulls, searches, orients, asserts facts, reviews, exports and verifies;
# finally keeps an agent's memory (seed 004) in a scratch repository: a
# session log with entries from the docs, the summary with an optimistic
# update, the session list, and a refused heading injection; and loads the
# session-start context of an item made from the docs (read-context: long
# notes elided, a token budget, propose and confirm, the decision log).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/release"
out="$root/build/demo"

bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DAGENTCTX_BUILD_TESTS=OFF \
  -DAGENTCTX_BUILD_BENCH=OFF -DAGENTCTX_BUILD_EXAMPLES=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
cmake --build "$build" -j"$(nproc)" --target agentsdb ctxstore relay relay-deposit agent-memory read-context
agentsdb="$build/cli/agentsdb"
ctxstore="$build/cli/ctxstore"
relay="$build/cli/relay"
relay_deposit="$build/cli/relay-deposit"
agent_memory="$build/cli/agent-memory"
read_context="$build/cli/read-context"
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

# Relay (the Agentic Protocol): every documentation page becomes a Context
# Package of project proj_agentctx_docs (title: its first heading;
# description: its first paragraph; content_md: the page), written as JSON
# files and deposited; the store hashes each over its canonical JSON.
relay_store="$out/relay"
packages="$out/packages"
rm -rf "$relay_store" "$packages"
mkdir -p "$packages"
(cd "$root" && python3 - "$packages" docs/*.md docs/*/*.md <<'PY'
import datetime, json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
for path in sys.argv[2:]:
    text = pathlib.Path(path).read_text(encoding="utf-8")
    lines = text.splitlines()
    title = next((l[2:].strip() for l in lines if l.startswith("# ")), path)[:200]
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip() and not p.lstrip().startswith(("#", "```", "|"))]
    slug = re.sub(r"[^a-z0-9]+", "-", path.lower().removesuffix(".md")).strip("-")
    package = {
        "package_id": "pkg-" + slug,
        "project_id": "proj_agentctx_docs",
        "relay_version": "0.1",
        "title": title,
        "status": "complete",
        "package_type": "analysis",
        "review_type": "none",
        "created_at": now,
        "created_by": {"id": "scripts/demo.sh", "type": "script"},
        "description": " ".join(paragraphs[0].split())[:1000] if paragraphs else "",
        "tags": [pathlib.Path(path).parent.name],
        "content_md": text,
        "deliverables": [{"path": path, "type": "documentation"}],
        "x-demo-source": path,
    }
    (out / (slug + ".json")).write_text(json.dumps(package, ensure_ascii=False, indent=2), encoding="utf-8")
PY
)
first=$(ls "$packages" | head -n 1)
echo
echo "\$ relay-deposit --store build/demo/relay build/demo/packages/$first"
"$relay_deposit" --store "$relay_store" "$packages/$first"
echo
echo "\$ for f in build/demo/packages/*.json; do relay deposit --store build/demo/relay \$f; done"
n=0
for f in "$packages"/*.json; do
  [[ "$(basename "$f")" == "$first" ]] && continue
  "$relay" deposit --store "$relay_store" "$f" >/dev/null
  n=$((n + 1))
done
echo "deposited $n more packages"
show_relay() {
  echo
  printf '$ relay'
  printf ' %q' "$@"
  echo
  "$relay" "$@"
}
show_relay hash "$packages/$first"
show_relay pull --store "$relay_store" --mode latest --project proj_agentctx_docs --limit 3
show_relay pull --store "$relay_store" --mode relevant --project proj_agentctx_docs --query "canonical JSON sha256 package hash" --limit 3
show_relay assert --store "$relay_store" --project proj_agentctx_docs --subject agentctx --predicate version \
  --value "$("$relay" --version | awk '{print $NF}')"

# A draft handoff, read from standard input, goes through human review.
echo
echo "\$ relay deposit --store build/demo/relay -   # a draft handoff with decisions and open questions"
"$relay" deposit --store "$relay_store" - <<JSON
{"package_id": "pkg-demo-handoff", "project_id": "proj_agentctx_docs", "relay_version": "0.1",
 "title": "Docs reviewed by the demo", "status": "draft", "package_type": "handoff", "review_type": "none",
 "created_at": "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)", "created_by": {"id": "scripts/demo.sh", "type": "script"},
 "significance": 8, "decisions_made": ["Deposit each documentation page as an analysis package"],
 "open_questions": ["Which pages need worked examples?"],
 "handoff_note": "Review the format pages against the code before the next release."}
JSON
show_relay flag --store "$relay_store" --package pkg-demo-handoff --review-type human --note "check the figures"
show_relay review --store "$relay_store" --list --project proj_agentctx_docs
show_relay review --store "$relay_store" --package pkg-demo-handoff --status complete --note "figures checked"
show_relay orient --store "$relay_store" --project proj_agentctx_docs --max-tokens 600
show_relay export --store "$relay_store" --project proj_agentctx_docs -o "$out/relay-export.ndjson"
show_relay verify --store "$relay_store"

# Agent memory in a scratch repository (the memory lives in the repository,
# under .github/agent-memory/<agent>/).
memory_repo="$out/memory-repo"
rm -rf "$memory_repo"
mkdir -p "$memory_repo"
memory_repo=$(cd "$memory_repo" && pwd -P)
show_memory() {
  echo
  printf '$ agent-memory'
  printf ' %q' "$@"
  echo
  (cd "$memory_repo" && "$agent_memory" "$@")
}
today=$(date -u +%F)
show_memory start-session --agent docs-reader
show_memory start-session --agent docs-reader --date "$today"
for page in README.md docs/memory/agent-memory.md docs/relay/protocol.md; do
  title=$(grep -m1 '^# ' "$root/$page" | sed 's/^# //')
  show_memory append --agent docs-reader --section "Discussion Summary" --content "- Read $page: $title"
done
show_memory append --agent docs-reader --section Decisions --content "- Keep memory in the repository; git is the record"
show_memory append --agent docs-reader --section Decisions --content $'intro\n## Decisions\nfake' || \
  echo "(refused with exit $?: content can never create a section)"
base=$(cd "$memory_repo" && "$agent_memory" read-summary --agent docs-reader --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["hash"])')
show_memory update-summary --agent docs-reader --section Decisions --mode append \
  --content "- Memory lives in .github/agent-memory" --base-hash "$base"
show_memory update-summary --agent docs-reader --section Decisions --mode replace --content "- stale" \
  --base-hash "$base" || echo "(refused with exit $?: the summary changed since that hash)"
show_memory read-summary --agent docs-reader
show_memory list-sessions --agent docs-reader --json
echo
echo "\$ cat .github/agent-memory/docs-reader/logs/$today.md"
cat "$memory_repo/.github/agent-memory/docs-reader/logs/$today.md"

# The session-start context of an item: taste from the style notes, the
# item "relay-docs" with the protocol page as its (long) notes, a log of the
# sessions above and an open vocabulary gap.
context_root="$out/context"
rm -rf "$context_root"
mkdir -p "$context_root/relay-docs"
sed -n '1,/^## Layout/p' "$root/README.md" > "$context_root/taste.md"
echo "Understand the Relay store well enough to review a change to it." > "$context_root/relay-docs/brief.md"
cp "$root/docs/relay/protocol.md" "$context_root/relay-docs/notes.md"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for s in 1 2 3; do
  echo "{\"timestamp\":\"$now\",\"session_id\":\"demo-$s\",\"summary\":\"read docs page $s\",\"trace\":[1,2,3]}"
done > "$context_root/relay-docs/log.jsonl"
echo '{"term":"fact supersession","note":"no short word for it yet"}' > "$context_root/relay-docs/vocabulary_gaps.jsonl"
show_context() {
  echo
  printf '$ read-context'
  printf ' %q' "$@"
  echo
  (cd "$context_root" && "$read_context" "$@")
}
show_context show relay-docs --max-tokens 700 --taste-max-lines 30
show_context notes relay-docs --from 11 --lines 5
show_context propose --target notes --item relay-docs --content "- Reviewed the store format: CRC per record" --reason "demo"
proposal=$(cd "$context_root" && "$read_context" proposals --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["proposals"][0]["id"])')
show_context confirm "$proposal" --by demo-user --note "looks right"
show_context log
