#!/usr/bin/env bash
# Benchmark (issues 17 and 34): how fast `gavel ui` answers with a long history, on SQLite and on
# PostgreSQL (a throwaway cluster on a unix socket, bench/pg.sh). For each store, a repository
# whose store holds N fabricated runs (`gavel-bench history`: checkpoints, model calls, journal)
# plus three real scripted brief -> issue runs; `gavel ui` serves it and curl times each page over
# HTTP (medians of 5 after a warm-up): the runs page (newest, filtered, the oldest page), a run
# page, a draft's page with its diff, the spend page; then `gavel report RUN --html` as a process.
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
# shellcheck source=bench/pg.sh
source bench/pg.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh
stop_ui() {
  if [ -n "$ui_pid" ]; then
    kill "$ui_pid" 2> /dev/null || true
    wait "$ui_pid" 2> /dev/null || true
    ui_pid=""
  fi
}
# Runs under `set -e` as the EXIT trap: nothing in it may fail the script (the server's own
# exit status after the kill is 143).
cleanup() {
  stop_ui
  pg_stop
  rm -rf "$work" 2> /dev/null || { sleep 1; rm -rf "$work" || true; }
}
trap cleanup EXIT
bench_home "$work"
pg_start "$work/pg"

# The repository of one store, its history filled and three real runs made; leaves the shell
# in it.
new_repo() {
  local backend="$1" repo="$work/$1"
  mkdir -p "$repo" && cd "$repo"
  git init -q -b main
  git remote add origin "https://bench.invalid/ui/$backend.git"
  "$gavel" init > /dev/null
  {
    echo 'drafter:'
    echo '  - text: "# Add dark mode\n\n**Labels:** enhancement\n\n## Why\nToo bright.\n\n## What\nA dark theme.\n\n## Acceptance criteria\n- [ ] Dark theme\n\n## Out of scope\nOther themes.\n\n## Notes\nNone.\n"'
    echo '    cost_usd: 0.01'
    echo '  - text: "# Add dark mode\n\n**Labels:** enhancement\n\n## Why\nToo bright at night.\n\n## What\nA dark theme.\n\n## Acceptance criteria\n- [ ] Dark theme\n\n## Out of scope\nOther themes.\n\n## Notes\nNone.\n"'
    echo '    cost_usd: 0.01'
    echo 'reviewer:'
    echo '  - text: "```json\n{\"verdict\": \"REVISE\", \"findings\": [\"say when\"]}\n```\n"'
    echo '  - text: "```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n"'
  } > script.yaml
  sed -i -e 's|^drafter = .*|drafter = "scripted:script.yaml"|' -e 's|^reviewer = .*|reviewer = "scripted:script.yaml"|' gavel.toml
  printf '.gavel/\nscript.yaml*\n' >> .gitignore
  if [ "$backend" = postgres ]; then
    GAVEL_DATABASE_URL="$(pg_createdb ui)"
    export GAVEL_DATABASE_URL
    # Filling the history is not what is measured: it skips waiting for each commit's flush.
    "$bench" history "$n" --repo "$repo" --db-url "$GAVEL_DATABASE_URL?options=-c%20synchronous_commit%3Doff" \
      --project "bench.invalid/ui/$backend" > /dev/null
  else
    unset GAVEL_DATABASE_URL
    "$bench" history "$n" --repo "$repo" > /dev/null
  fi
  git add -A && git commit -q -m "history of $n runs"
  for i in 1 2 3; do
    printf '# Idea %s\n\nPeople want a dark mode.\n' "$i" > "ideas/active/idea-$i.md"
    rm -f script.yaml.calls.jsonl
    "$gavel" issue "ideas/active/idea-$i.md" --auto > "$work/run.log" 2>&1 \
      || { echo "$backend: run $i failed:" >&2; cat "$work/run.log" >&2; exit 1; }
  done
}

page() {
  local path="$1" times=() code
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url$path")
  [ "$code" = 200 ] || { echo "GET $path: HTTP $code" >&2; exit 1; }
  for _ in $(seq 1 "$reps"); do
    times+=("$(curl -s -o /dev/null -w '%{time_total}' "$url$path" | awk '{printf "%.2f", $1 * 1000}')")
  done
  median "${times[@]}"
}

last=$(( n + 3 ))
pages=$(( (last + 49) / 50 ))
declare -A ms
for backend in sqlite postgres; do
  new_repo "$backend"
  "$gavel" ui > "$work/ui.out" 2> /dev/null &
  ui_pid=$!
  for _ in $(seq 1 100); do [ -s "$work/ui.out" ] && break; sleep 0.05; done
  url=$(head -1 "$work/ui.out")
  [ -n "$url" ] || { echo "gavel ui printed no URL" >&2; exit 1; }
  draft=$(curl -s "${url}runs/$last/index.html" | grep -o 'files/[0-9]*\.html">[0-9]*-draft.md' | tail -1 | cut -d'"' -f1)
  [ -n "$draft" ] || { echo "no draft on run $last's page" >&2; exit 1; }
  # Each page is timed into a variable first: a failing `page` inside an assignment's
  # arguments would not stop the script under `set -e`.
  t=$(page index.html); ms[$backend,newest]=$t
  t=$(page 'index.html?status=done&since=2026-01-01'); ms[$backend,filtered]=$t
  t=$(page "index.html?page=$pages"); ms[$backend,oldest]=$t
  t=$(page "runs/$last/index.html"); ms[$backend,run]=$t
  t=$(page "runs/$last/$draft"); ms[$backend,draft]=$t
  t=$(page spend.html); ms[$backend,spend]=$t
  stop_ui
  times=()
  for i in $(seq 1 "$reps"); do
    rm -rf "$work/report"
    start=$EPOCHREALTIME
    "$gavel" report "$last" --html "$work/report" > /dev/null 2>&1 || { echo "gavel report $last failed" >&2; exit 1; }
    times+=("$(ms_since "$start")")
  done
  ms[$backend,report]=$(median "${times[@]}")
  cd "$work"
done

row() { echo "| $1 | ${ms[sqlite,$2]} | ${ms[postgres,$2]} |"; }
echo "| page ($last runs in the store, gavel ui over HTTP), ms (median of $reps) | SQLite | PostgreSQL |"
echo "|---|---|---|"
row "runs, newest 50" newest
row "runs, status=done, 2026" filtered
row "runs, the oldest page ($pages)" oldest
row "a run (#$last: 2 rounds, 4 calls)" run
row "its second draft, with its diff" draft
row "spend by day, workflow and role" spend
row "gavel report $last --html DIR (whole process)" report
