#!/usr/bin/env bash
# Benchmark: the brief -> issue workflow with the scripted provider (three revision loops,
# then approval; checkpoints, lineage files and the final commit all on), run many times as a
# person runs it (one `gavel issue --auto` process per run). Reports wall time per run and
# state-database bytes per run.
#
#   bash bench/issue-workflow.sh            # 200 runs
#   bash bench/issue-workflow.sh --runs 50
#   bash bench/issue-workflow.sh --quick    # 5 runs, for CI (checks the harness, not speed)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=200
case "${1:-}" in
  --quick) runs=5 ;;
  --runs) runs="${2:?--runs needs a number}" ;;
  "") ;;
  *) echo "usage: $0 [--quick | --runs N]" >&2; exit 2 ;;
esac

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
gavel="$(scripts/build-release -p gavel-cli)/gavel"

work="$(mktemp -d "${TMPDIR:-/tmp}/gavel-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_home "$work"
repo="$work/repo"
mkdir -p "$repo" && cd "$repo"
git init -q -b main
"$gavel" init > /dev/null

draft() { printf '    - text: "# Add dark mode v%s\\n\\n**Labels:** enhancement\\n\\n## Why\\nToo bright.\\n\\n## What\\nA dark theme.\\n\\n## Acceptance criteria\\n- [ ] Dark theme\\n\\n## Out of scope\\nOther themes.\\n\\n## Notes\\nNone.\\n"\n' "$1"; }
{
  echo "drafter:"
  for n in 1 2 3 4; do draft "$n" | sed 's/^  //'; done
  echo "reviewer:"
  for _ in 1 2 3; do echo '  - text: "```json\n{\"verdict\": \"REVISE\", \"findings\": [\"more detail\"]}\n```\n"'; done
  echo '  - text: "```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n"'
} > script.yaml
sed -i -e 's|^drafter = .*|drafter = "scripted:script.yaml"|' -e 's|^reviewer = .*|reviewer = "scripted:script.yaml"|' gavel.toml
printf '.gavel/\nscript.yaml*\n' >> .gitignore
git add -A && git commit -q -m init

for i in $(seq 1 "$runs"); do
  printf '# Idea %s\n\nPeople want a dark mode.\n' "$i" > "ideas/active/idea-$i.md"
done

start=$(date +%s%N)
for i in $(seq 1 "$runs"); do
  "$gavel" issue "ideas/active/idea-$i.md" --auto > /dev/null 2>&1 || { echo "run $i failed" >&2; "$gavel" issue "ideas/active/idea-$i.md" --auto; exit 1; }
done
end=$(date +%s%N)

filed=$(ls docs/issues/*.md | wc -l)
[ "$filed" -eq "$runs" ] || { echo "expected $runs issues, found $filed" >&2; exit 1; }
db_bytes=$(( $(stat -c %s .gavel/state.db) + $(stat -c %s .gavel/state.db-wal 2>/dev/null || echo 0) ))
total_ms=$(( (end - start) / 1000000 ))
echo "issue workflow benchmark: $runs runs, 4 drafts + 4 verdicts each (3 revision loops), auto mode"
echo "  wall time per run:       $(awk -v t="$total_ms" -v n="$runs" 'BEGIN { printf "%.2f ms", t / n }') (whole process: start, 7 nodes x 4 loops, checkpoints, lineage files, git commit)"
echo "  state database per run:  $(( db_bytes / runs )) bytes (total $db_bytes bytes, SQLite WAL included)"
echo "  checkpoints per run:     $("$gavel" show 1 --json | grep -c '"event": "node"')"
