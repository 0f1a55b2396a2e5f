#!/usr/bin/env bash
# Benchmark (issue 17): how fast `gavel ui` answers with a long history. A repository whose store
# holds N fabricated runs (`gavel-bench history`: checkpoints, model calls, journal) plus three
# real scripted brief -> issue runs; `gavel ui` serves it and curl times each page over HTTP
# (medians of 5 after a warm-up): the runs page (newest, filtered, the oldest page), a run page,
# a draft's page with its diff, the spend page; then `gavel report RUN --html` as a process.
#
#   bash bench/ui.sh            # 10,000 earlier runs
#   bash bench/ui.sh --quick    # 100 earlier runs, medians of 3 (CI: the harness)
set -euo pipefail
cd "$(dirname "$0")/.."

n=10000
reps=5
case "${1:-}" in
  --quick) n=100; reps=3 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
bin="$(scripts/build-release -p gavel-cli -p gavel-bench)"
gavel="$bin/gavel"
bench="$bin/gavel-bench"
command -v curl > /dev/null || { echo "curl is needed" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/gavel-ui-XXXXXX")"
ui_pid=""
# Runs under `set -e` as the EXIT trap: nothing in it may fail the script (the server's own
# exit status after the kill is 143).
cleanup() {
  if [ -n "$ui_pid" ]; then
    kill "$ui_pid" 2> /dev/null || true
    wait "$ui_pid" 2> /dev/null || true
  fi
  rm -rf "$work" 2> /dev/null || { sleep 1; rm -rf "$work" || true; }
}
trap cleanup EXIT
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_home "$work"

repo="$work/repo"
mkdir -p "$repo" && cd "$repo"
git init -q -b main
"$gavel" init > /dev/null
{
  echo 'drafter:'
  echo '  - text: "# Add dark mode\n\n**Labels:** enhancement\n\n## Why\nToo bright.\n"'
  echo '    cost_usd: 0.01'
  echo '  - text: "# Add dark mode\n\n**Labels:** enhancement\n\n## Why\nToo bright at night.\n"'
  echo '    cost_usd: 0.01'
  echo 'reviewer:'
  echo '  - text: "```json\n{\"verdict\": \"REVISE\", \"findings\": [\"say when\"]}\n```\n"'
  echo '  - text: "```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n"'
} > script.yaml
sed -i -e 's|^drafter = .*|drafter = "scripted:script.yaml"|' -e 's|^reviewer = .*|reviewer = "scripted:script.yaml"|' gavel.toml
printf '.gavel/\nscript.yaml*\n' >> .gitignore
"$bench" history "$n" --repo "$repo" > /dev/null
git add -A && git commit -q -m "history of $n runs"
for i in 1 2 3; do
  printf '# Idea %s\n\nPeople want a dark mode.\n' "$i" > "ideas/active/idea-$i.md"
  rm -f script.yaml.calls.jsonl
  "$gavel" issue "ideas/active/idea-$i.md" --auto > /dev/null 2>&1
done
last=$(( n + 3 ))

"$gavel" ui > "$work/ui.out" 2> /dev/null &
ui_pid=$!
for _ in $(seq 1 100); do [ -s "$work/ui.out" ] && break; sleep 0.05; done
url=$(head -1 "$work/ui.out")
[ -n "$url" ] || { echo "gavel ui printed no URL" >&2; exit 1; }

page() {
  local path="$1" times=() code
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url$path")
  [ "$code" = 200 ] || { echo "GET $path: HTTP $code" >&2; exit 1; }
  for _ in $(seq 1 "$reps"); do
    times+=("$(curl -s -o /dev/null -w '%{time_total}' "$url$path" | awk '{printf "%.2f", $1 * 1000}')")
  done
  median "${times[@]}"
}
pages=$(( (last + 49) / 50 ))
draft=$(curl -s "${url}runs/$last/index.html" | grep -o 'files/[0-9]*\.html">[0-9]*-draft.md' | tail -1 | cut -d'"' -f1)
[ -n "$draft" ] || { echo "no draft on run $last's page" >&2; exit 1; }

# Each page is timed into a variable first: a failing `page` inside an `echo`'s arguments
# would not stop the script under `set -e`.
newest=$(page index.html)
filtered=$(page 'index.html?status=done&since=2026-01-01')
oldest=$(page "index.html?page=$pages")
run_page=$(page "runs/$last/index.html")
draft_page=$(page "runs/$last/$draft")
spend=$(page spend.html)
echo "| page ($last runs in the store, gavel ui over HTTP) | ms (median of $reps) |"
echo "|---|---|"
echo "| runs, newest 50 | $newest |"
echo "| runs, status=done, 2026 | $filtered |"
echo "| runs, the oldest page ($pages) | $oldest |"
echo "| a run (#$last: 2 rounds, 4 calls) | $run_page |"
echo "| its second draft, with its diff | $draft_page |"
echo "| spend by day, workflow and role | $spend |"
times=()
for i in $(seq 1 "$reps"); do
  rm -rf "$work/report"
  start=$EPOCHREALTIME
  "$gavel" report "$last" --html "$work/report" > /dev/null 2>&1 || { echo "gavel report $last failed" >&2; exit 1; }
  times+=("$(ms_since "$start")")
done
echo "| gavel report $last --html DIR (whole process) | $(median "${times[@]}") |"
