#!/usr/bin/env bash
# Benchmark: the diff review gate's analysis (crates/gavel-diffgate, LLD #171 §8.1).
#
# Speed: a repository of 10,000 committed files (50 lines each, in 100 folders) in which EVERY
# file is changed and staged (a tenth replaced wholesale, the rest with three lines edited).
# Median of 3 alternating runs of
#   numstat  `git diff --cached --numstat` alone: the floor any analysis has to pay;
#   analyze  the `analyze` example: gavel_diffgate::analyze_staged (one diff + one cat-file);
#   naive    what the LLD's pseudocode does: numstat, then one `git show HEAD:<path> | wc -l`
#            per changed file. The per-file loop runs on a 1,000-file subset and is scaled to
#            all files (it is linear in the number of files; running it in full takes ~10x
#            longer for the same answer).
# Targets: analyze <= 1.5x numstat, naive >= 10x analyze.
#
# Memory: a second repository whose staged diff is ~500 MB (50 files of ~10 MB, every line
# replaced: 500 MB of old lines out, 500 MB of new lines in). Peak memory of the analysis (and of the report, whose per-file diffs are capped at
# 500 lines) as `/usr/bin/time -v` sees it (the largest single process: git's own diff
# included) and as the gate process itself sees it (VmHWM). Target: the gate < 50 MB.
#
#   bash bench/diff-gate.sh            # full: enforces the targets (exit 1 on a miss)
#   bash bench/diff-gate.sh --quick    # 1,000 files and a 20 MB diff; checks the harness only
set -euo pipefail
cd "$(dirname "$0")/.."

files=10000
big_files=50
quick=0
case "${1:-}" in
  --quick) quick=1; files=1000; big_files=2 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
big_lines=100000 # ~100 bytes a line: ~10 MB a file
subset=1000
rounds=3

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --release --locked -q --example analyze -p gavel-diffgate
analyze="$CARGO_TARGET_DIR/release/examples/analyze"

work="$(mktemp -d "${TMPDIR:-/tmp}/gavel-diffgate-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" GIT_CONFIG_GLOBAL="$work/gitconfig" GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
printf '[user]\n\tname = bench\n\temail = bench@gavel.invalid\n[commit]\n\tgpgsign = false\n[gc]\n\tauto = 0\n' > "$GIT_CONFIG_GLOBAL"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# check NAME VALUE OP TARGET: prints the verdict and records a miss in full mode.
misses=0
check() {
  local verdict
  if awk -v v="$2" -v t="$4" -v op="$3" 'BEGIN { exit !((op == "<=") ? v <= t : v >= t) }'; then
    verdict=ok
  else
    verdict=MISSED
    misses=$((misses + 1))
  fi
  [ "$quick" = 1 ] && verdict="$verdict (not enforced with --quick)"
  printf '  %-28s %8s   target %s %s   %s\n' "$1" "$2" "$3" "$4" "$verdict"
}

# --- speed -----------------------------------------------------------------------------------
repo="$work/many"
mkdir -p "$repo" && cd "$repo"
git init -q
dirs=$(( files / 100 )); [ "$dirs" -lt 1 ] && dirs=1
for d in $(seq 0 $(( dirs - 1 ))); do mkdir -p "dir$d"; done
echo "generating $files files in $dirs folders..."
awk -v files="$files" -v dirs="$dirs" 'BEGIN {
  for (i = 0; i < files; i++) {
    f = sprintf("dir%d/file%05d.txt", i % dirs, i)
    for (l = 0; l < 50; l++) printf "file %d line %d: the original text of this line\n", i, l > f
    close(f)
  }
}'
git add -A && git commit -q -m initial
awk -v files="$files" -v dirs="$dirs" 'BEGIN {
  for (i = 0; i < files; i++) {
    f = sprintf("dir%d/file%05d.txt", i % dirs, i)
    for (l = 0; l < 50; l++) {
      if (i % 10 == 0) printf "file %d line %d: replaced wholesale by new content\n", i, l > f
      else if (l == 10 || l == 25 || l == 40) printf "file %d line %d: edited\n", i, l > f
      else printf "file %d line %d: the original text of this line\n", i, l > f
    }
    close(f)
  }
}'
git add -A
changed=$(git diff --cached --name-only | wc -l)
echo "staged: $changed changed files"

git diff --cached --numstat > "$work/numstat.txt"
head -n "$subset" "$work/numstat.txt" | cut -f3 > "$work/subset.txt"
subset_n=$(wc -l < "$work/subset.txt")
naive_loop() {
  git diff --cached --numstat > /dev/null
  while IFS= read -r path; do
    git show "HEAD:$path" | wc -l > /dev/null
  done < "$work/subset.txt"
}

# One unrecorded warm-up of each, then alternating rounds.
git diff --cached --numstat > /dev/null
"$analyze" > /dev/null
naive_loop
t_numstat=() t_analyze=() t_naive=()
for _ in $(seq "$rounds"); do
  s=$(now_ms); git diff --cached --numstat > /dev/null; e=$(now_ms); t_numstat+=($(( e - s )))
  s=$(now_ms); summary=$("$analyze"); e=$(now_ms); t_analyze+=($(( e - s )))
  s=$(now_ms); naive_loop; e=$(now_ms); t_naive+=($(( e - s )))
done
m_numstat=$(median "${t_numstat[@]}")
m_analyze=$(median "${t_analyze[@]}")
m_naive_subset=$(median "${t_naive[@]}")
# The naive run did the full numstat once plus the per-file loop on the subset; scale the loop.
m_naive=$(awk -v n="$m_numstat" -v s="$m_naive_subset" -v all="$changed" -v part="$subset_n" \
  'BEGIN { loop = s - n; if (loop < 0) loop = 0; printf "%d", n + loop * all / part }')

echo
echo "speed: $changed staged files, median of $rounds runs (ms)"
printf '  %-28s %8s\n' "git diff --cached --numstat" "$m_numstat" \
  "analyze example" "$m_analyze" \
  "naive, $subset_n files" "$m_naive_subset"
if [ "$subset_n" -lt "$changed" ]; then
  printf '  %-28s %8s   (per-file loop scaled x%s from %s files)\n' "naive, estimated for all" \
    "$m_naive" "$(ratio "$changed" "$subset_n")" "$subset_n"
fi
echo "  analyze: $summary"
check "analyze / numstat" "$(ratio "$m_analyze" "$m_numstat")" "<=" 1.5
check "naive / analyze" "$(ratio "$m_naive" "$m_analyze")" ">=" 10

# --- memory ----------------------------------------------------------------------------------
repo="$work/big"
mkdir -p "$repo" && cd "$repo"
git init -q
echo
echo "generating $big_files files of $big_lines lines (~10 MB each)..."
pad="................................................................"
for i in $(seq "$big_files"); do
  seq -f "big file $i, original line %08.0f $pad" 1 "$big_lines" > "big$i.txt"
done
git add -A && git commit -q -m big
for i in $(seq "$big_files"); do
  seq -f "big file $i, replacement line %08.0f $pad" 1 "$big_lines" > "big$i.txt"
done
git add -A
diff_mb=$(cat big*.txt | wc -c | awk '{ printf "%d", $1 / 1048576 }')
echo "staged: $big_files files, $diff_mb MB of content replacing $diff_mb MB (every line changed)"

rss_of() { # prints "<max RSS of the process tree, KiB> <summary line>"
  local out
  out=$( { /usr/bin/time -v "$analyze" "$@" 2> "$work/time.txt"; } )
  echo "$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time.txt") $out"
}
if [ -x /usr/bin/time ]; then
  read -r tree_kb analyze_summary <<< "$(rss_of)"
  read -r tree_report_kb report_summary <<< "$(rss_of --report)"
else
  tree_kb=n/a tree_report_kb=n/a
  analyze_summary=$("$analyze")
  report_summary=$("$analyze" --report)
fi
s=$(now_ms); git diff --cached --numstat > /dev/null; e=$(now_ms); big_numstat=$(( e - s ))
self_kb=$(sed -n 's/.*peak_rss_kb=\([0-9]*\).*/\1/p' <<< "$analyze_summary")
self_report_kb=$(sed -n 's/.*peak_rss_kb=\([0-9]*\).*/\1/p' <<< "$report_summary")
mb() { awk -v k="$1" 'BEGIN { if (k == "n/a") print k; else printf "%.1f", k / 1024 }'; }

echo
echo "memory: $diff_mb MB replaced in $big_files files, peak resident memory (MB)"
echo "  analyze:         $analyze_summary"
echo "  analyze+report:  $report_summary"
echo "  (git diff --cached --numstat alone: $big_numstat ms; the report re-runs git's diff for"
echo "   --stat and once per flagged file, stopping each after 500 lines)"
printf '  %-28s %8s\n' "largest process, analyze" "$(mb "$tree_kb")" \
  "largest process, +report" "$(mb "$tree_report_kb")"
echo "  (\"largest process\" is /usr/bin/time's figure: the biggest of the gate and the git"
echo "   processes it ran; git's diff holds both sides of the largest file pair)"
check "gate process, analyze" "$(mb "$self_kb")" "<=" 50
check "gate process, +report" "$(mb "$self_report_kb")" "<=" 50

echo
if [ "$quick" = 1 ]; then
  echo "quick run: the harness works; targets are only enforced in a full run"
elif [ "$misses" -gt 0 ]; then
  echo "$misses target(s) missed"
  exit 1
else
  echo "all targets met"
fi
