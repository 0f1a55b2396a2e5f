#!/usr/bin/env bash
# Benchmark: does a run cost more in a repository with a long history? A brief -> issue run
# (`gavel issue --auto`, scripted provider, lineage, filing, the git commit) and `gavel runs`,
# timed as whole processes after 0, 1,000 and 10,000 earlier runs, on SQLite and on PostgreSQL
# (a throwaway cluster on a unix socket). The history is fabricated by `gavel-bench history`:
# the runs in the store (checkpoints, model calls, journal) and, committed in the repository,
# what they filed (issue files, done lineage folders, ideas moved to done/).
#
#   bash bench/history.sh            # 0, 1,000 and 10,000 earlier runs; medians of 9 and 9
#   bash bench/history.sh --quick    # 0 and 100 earlier runs; medians of 3 (CI: the harness)
set -euo pipefail
cd "$(dirname "$0")/.."

sizes="0 1000 10000"
runs=9
lists=9
case "${1:-}" in
  --quick) sizes="0 100"; runs=3; lists=3 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
bin="$(scripts/build-release -p gavel-cli -p gavel-bench)"
gavel="$bin/gavel"
bench="$bin/gavel-bench"

work="$(mktemp -d "${TMPDIR:-/tmp}/gavel-history-XXXXXX")"
# shellcheck source=bench/pg.sh
source bench/pg.sh
# shellcheck source=bench/lib.sh
source bench/lib.sh
cleanup() { pg_stop; rm -rf "$work"; }
trap cleanup EXIT
pg_start "$work/pg"

bench_home "$work"


# A repository after `gavel init`, answering with one draft and an approval per run.
new_repo() {
  local repo="$1" remote="$2"
  mkdir -p "$repo" && cd "$repo"
  git init -q -b main
  git remote add origin "$remote"
  "$gavel" init > /dev/null
  {
    echo 'drafter:'
    echo '  - text: "# Add dark mode\n\n**Labels:** enhancement\n\n## Why\nToo bright.\n\n## What\nA dark theme.\n\n## Acceptance criteria\n- [ ] Dark theme\n\n## Out of scope\nOther themes.\n\n## Notes\nNone.\n"'
    echo 'reviewer:'
    echo '  - text: "```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n"'
  } > script.yaml
  sed -i -e 's|^drafter = .*|drafter = "scripted:script.yaml"|' -e 's|^reviewer = .*|reviewer = "scripted:script.yaml"|' gavel.toml
  printf '.gavel/\nscript.yaml*\n' >> .gitignore
}

echo "| store | earlier runs | gavel issue --auto, ms (median of $runs) | its git commit of the same paths alone, ms | gavel without its git, ms | gavel runs, ms (median of $lists) |"
echo "|---|---|---|---|---|---|"
for backend in sqlite postgres; do
  for n in $sizes; do
    repo="$work/$backend-$n"
    new_repo "$repo" "https://bench.invalid/history/$backend-$n.git"
    if [ "$backend" = postgres ]; then
      GAVEL_DATABASE_URL="$(pg_createdb "h_$n")"
      export GAVEL_DATABASE_URL
      # Filling the history is not what is measured: it skips waiting for each commit's flush.
      "$bench" history "$n" --repo "$repo" --db-url "$GAVEL_DATABASE_URL?options=-c%20synchronous_commit%3Doff" \
        --project "bench.invalid/history/$backend-$n" > /dev/null
    else
      unset GAVEL_DATABASE_URL
      "$bench" history "$n" --repo "$repo" > /dev/null
    fi
    git config gc.auto 0
    git add -A && git commit -q -m "history of $n runs"
    # A repository's files are older than its index: let git record them as clean once (files
    # written in the second the index was written are re-read by every later git command).
    # and pack the objects, as a long-lived repository has them (else the first commits start
    # git's background gc, which competes with what is measured).
    sleep 1 && git status > /dev/null && git gc -q && git config --unset gc.auto
    for i in $(seq 1 "$runs"); do
      printf '# New idea %s\n\nPeople want a dark mode.\n' "$i" > "ideas/active/new-$i.md"
    done
    # One warm-up of each, not counted.
    "$gavel" runs > /dev/null
    run_times=()
    for i in $(seq 1 "$runs"); do
      start=$EPOCHREALTIME
      "$gavel" issue "ideas/active/new-$i.md" --auto > /dev/null 2>&1 \
        || { echo "run $i failed" >&2; "$gavel" issue "ideas/active/new-$i.md" --auto; exit 1; }
      run_times+=("$(ms_since "$start")")
    done
    list_times=()
    for _ in $(seq 1 "$lists"); do
      start=$EPOCHREALTIME
      "$gavel" runs > /dev/null
      list_times+=("$(ms_since "$start")")
    done
    # git's own cost in this repository: the one git process a filing runs, on the same kind of
    # paths a filing commits (a lineage folder, an issue, the idea's new place), with nothing
    # else. gavel marks new files intent-to-add in-process; `git add -N` does it here, untimed.
    # Named as a filing names them (the next issue numbers), so they sort where gavel's do.
    # (gavel skips git's automatic maintenance when nothing is due, as here after the gc.)
    git_times=()
    for j in $(seq 1 "$runs"); do
      k=$((n + runs + j))
      mkdir -p "docs/lineage/done/$k-base"
      for f in 001-brief.md 002-draft.md 003-verdict.md 004-filed.json; do echo "$j" > "docs/lineage/done/$k-base/$f"; done
      echo "$j" > "docs/issues/$(printf %04d "$k")-base.md"; echo "$j" > "ideas/done/$k-base.md"
      paths=("docs/lineage/done/$k-base" "docs/issues/$(printf %04d "$k")-base.md" "ideas/done/$k-base.md" docs/issues/labels.txt)
      git add -N -- "${paths[@]}"
      start=$EPOCHREALTIME
      git -c maintenance.auto=false commit --quiet --include -m "base $j" -- "${paths[@]}"
      git_times+=("$(ms_since "$start")")
    done
    filed=$(ls docs/issues/*.md | wc -l)
    [ "$filed" -eq $((n + 2 * runs)) ] || { echo "expected $((n + runs)) issues and $runs baseline files, found $filed" >&2; exit 1; }
    run_ms=$(median "${run_times[@]}")
    git_ms=$(median "${git_times[@]}")
    rest_ms=$(awk -v a="$run_ms" -v b="$git_ms" 'BEGIN {printf "%.2f", a - b}')
    echo "| $backend | $n | $run_ms | $git_ms | $rest_ms | $(median "${list_times[@]}") |"
    cd - > /dev/null
  done
done
