#!/usr/bin/env bash
# Benchmark (issue 34): gavel implement on repositories of real size, against what git itself
# costs on the same tree, in one run.
#
# Two fixture repositories, each committed in one commit:
#   deps   the sources of the crates this workspace depends on (`cargo vendor --locked`, from
#          cargo's download cache: about 21,500 files, 430 MB of real source), plus a tiny project;
#   small  100,000 small files (40 bytes each, 100 per folder), plus the same project.
# On each, in the same run:
#   git status            `git status --porcelain` (median of 5, after one untimed to warm it);
#   git worktree add      `git worktree add --detach` of HEAD, removed after each (fastest of 3);
#   gavel implement       `gavel implement 1 --auto` with a scripted implementer (a failing test,
#                         then the code) and the project's 10 ms shell test, to the diff gate;
#                         its total, its start (process start to the first model call, from the
#                         run's log), each model step (the node that makes the call, from the
#                         log: everything gavel does around the call, the call itself is
#                         instant), and its peak RSS (`/usr/bin/time -f %M`);
#   from a spare          the run aborted (its worktree kept as a spare) and a second run
#                         started: its start, which takes the spare instead of checking out;
# and, on deps, `rg --files | wc -l`. Then, on both (`context_rows`, a block of its own): the
# context validator (`--context` of `gavel lld` and `gavel implement`) on the whole tree, alone
# (`gavel-bench context .`, in process) and as a whole `gavel lld 999 --context .` process (it
# stops at the refusal, or at the issue that does not exist), next to `rg --files | wc -l`, with
# files per second for each. gavel runs first, then git's own commands: on this
# machine's ext4 a new file is slow for a while after many were deleted (bench/lib.sh,
# settle_fs), and each timed `git worktree add` is removed again, so whatever runs after them
# starts its checkout on a slower filesystem.
#
#   bash bench/real-size.sh            # the issue's sizes
#   bash bench/real-size.sh --quick    # 2,000 and 5,000 files: checks the harness (CI)
#
# Targets (issue 34): a model step <= 2x git status; start <= git worktree add + 0.5 s, and
# under 2 s on deps; peak RSS <= 200 MB on small; context validation of deps under 2 s.
# Reported (ok / MISSED), not enforced.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
export LC_ALL=C

quick=0
small_files=100000
deps_limit=0
case "${1:-}" in
  --quick) quick=1; small_files=5000; deps_limit=2000 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

# ripgrep, for the file-listing yardstick (Debian's package, as scripts/test installs its tools).
if ! command -v rg > /dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep > /dev/null
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
echo "building gavel (release)..." >&2
bin="$(scripts/build-release -p gavel-cli -p gavel-bench)"
gavel="$bin/gavel"

work="$(mktemp -d "${TMPDIR:-/tmp}/gavel-real-size-XXXXXX")"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
bench_home "$work"
progress() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# The project every fixture carries: an issue, its design, a scripted implementer (a failing
# test, then the code) and the test command.
project() {
  local dir="$1"
  mkdir -p "$dir/docs/issues" "$dir/tests"
  printf -- '---\nnumber: 1\ntitle: Greeting\nlabels: [cli]\nstate: open\n---\n\n# Greeting\n\nSay hello by name.\n' > "$dir/docs/issues/0001-greeting.md"
  printf '# 1 - Feature: greeting\n\n`greet.sh` gets `greet NAME`, which prints `hello, NAME`.\n' > "$dir/docs/design.md"
  {
    echo 'model: scripted-bench'
    echo 'roles:'
    echo '  implementer:'
    echo '    - text: "=== gavel:write tests/test_greet.sh\n. ./greet.sh\n[ \"$(greet ada)\" = \"hello, ada\" ] || exit 1\n=== gavel:end\n"'
    echo '    - text: "=== gavel:write greet.sh\ngreet() { echo \"hello, $1\"; }\n=== gavel:end\n"'
  } > "$dir/script.yaml"
}

# new_repo DIR: commits DIR's files with gavel init, the project and its settings.
new_repo() {
  local dir="$1"
  (
    cd "$dir"
    git init -q -b main
    "$gavel" init > /dev/null
    project "$dir"
    printf '\n[workflows.implement.roles]\nimplementer = "scripted:script.yaml"\n\n[implement]\ntest = "sh tests/test_greet.sh"\nrunner = "generic"\n' >> gavel.toml
    printf '.gavel/\nscript.yaml.*\n' >> .gitignore
    git add -A > /dev/null
    git commit -q -m fixture
  )
}

# --- fixtures --------------------------------------------------------------------------------
progress "fixture deps: cargo vendor of this workspace"
deps="$work/deps"
mkdir -p "$deps"
cargo vendor --locked --versioned-dirs -q "$deps/vendor" > /dev/null
if [ "$deps_limit" -gt 0 ]; then
  # --quick: the first files in path order, the rest removed.
  find "$deps/vendor" -type f | sort | tail -n +"$((deps_limit + 1))" | xargs -r rm -f
  find "$deps/vendor" -type d -empty -delete
fi
new_repo "$deps"

progress "fixture small: $small_files files of 40 bytes"
small="$work/small"
mkdir -p "$small"
"${PYTHON:-python3}" - "$small/files" "$small_files" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 100:04d}")
    if i % 100 == 0:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i % 100:02d}.txt"), "w") as f:
        f.write(f"file {i:08d} of the small fixture.....\n")
EOF
new_repo "$small"

# --- measurements ----------------------------------------------------------------------------
rows=()
row() { rows+=("| $1 | $2 | $3 | $4 | $5 | $6 |"); }
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "ok" : "MISSED" }'; }
# log_epoch LINE: a run-log line's timestamp (UTC, microseconds) as epoch seconds.
log_epoch() { date -d "$(cut -c1-26 <<< "$1" | tr T ' ')" +%s.%N; }

# gavel_run NAME DIR: gavel implement on DIR, timed (sets start_$NAME, total_$NAME).
gavel_run() {
  local name="$1" dir="$2"
  cd "$dir"
  progress "$name: gavel implement 1 --auto (to the diff gate)"
  local start rc=0 total
  start=$EPOCHREALTIME
  /usr/bin/time -f %M -o "$work/rss-$name" "$gavel" implement 1 --lld docs/design.md --auto \
    > "$work/out-$name" 2>&1 < /dev/null || rc=$?
  total=$(ms_since "$start")
  if [ "$rc" != 3 ] || ! grep -q "diff" "$work/out-$name"; then
    echo "gavel implement exited $rc before the diff gate:" >&2
    tail -20 "$work/out-$name" >&2
    exit 1
  fi
  printf -v "start_$name" '%s' "$start"
  printf -v "total_$name" '%s' "$total"
  cd "$root"
}

# start_ms START LOG: process start (epoch seconds) to LOG's first model call, in ms.
start_ms() {
  local first
  first=$(grep -m1 "model call" "$2")
  awk -v s="$1" -v e="$(log_epoch "$first")" 'BEGIN { printf "%.0f", (e - s) * 1000 }'
}

# again NAME DIR: run 1 aborted (its worktree kept as a spare), then a second run on DIR; sets
# start_again_$NAME (its start, ms) and checks that it took the spare.
again() {
  local name="$1" dir="$2" start
  cd "$dir"
  "$gavel" abort 1 > /dev/null
  [ -n "$(ls .gavel/worktrees/.spare 2> /dev/null)" ] || { echo "$name: no spare kept" >&2; exit 1; }
  progress "$name: a second run, from the spare"
  start=$EPOCHREALTIME
  "$gavel" implement 1 --lld docs/design.md --auto > "$work/out-$name-2" 2>&1 < /dev/null || true
  grep -q "made from a spare" "$work/out-$name-2" || {
    echo "$name: the second run did not take the spare:" >&2
    tail -20 "$work/out-$name-2" >&2
    exit 1
  }
  printf -v "start_again_$name" '%s' "$(start_ms "$start" .gavel/logs/run-2.log)"
  cd "$root"
}

# measure NAME DIR: git's own commands on DIR, then the rows for NAME's gavel run.
measure() {
  local name="$1" dir="$2" s files status wt bytes
  local start total
  start="start_$name" total="total_$name"
  start="${!start}" total="${!total}"
  cd "$dir"
  files=$(git ls-files | wc -l)
  bytes=$(du -sb --exclude=.git --exclude=.gavel . | cut -f1)
  git status --porcelain > /dev/null
  local st=() wa=()
  for _ in 1 2 3 4 5; do
    s=$EPOCHREALTIME; git status --porcelain > /dev/null; st+=("$(ms_since "$s")")
  done
  for i in 1 2 3; do
    s=$EPOCHREALTIME; git worktree add -q --detach "$work/wt-$name-$i" HEAD; wa+=("$(ms_since "$s")")
    git worktree remove --force "$work/wt-$name-$i"
  done
  # The fastest of the three (the later ones start after a removal; see above).
  status=$(median "${st[@]}") wt=$(printf '%s\n' "${wa[@]}" | sort -g | head -1)
  progress "$name: $files files, $((bytes / 1000000)) MB; git status $status ms, git worktree add $wt ms"

  local rss_kb log first steps=() prev="" line t
  rss_kb=$(tail -1 "$work/rss-$name")
  log=.gavel/logs/run-1.log
  local startup again_ms
  startup=$(start_ms "$start" "$log")
  again_ms="start_again_$name"
  again_ms="${!again_ms}"
  # A model step: from its node's start to the checkpoint after it (the call is instant).
  while IFS= read -r line; do
    case "$line" in
      *"node started"*) prev=$(log_epoch "$line") ;;
      *"model call"*) [ -n "$prev" ] && steps+=("pending:$prev") ;;
      *"checkpoint "*)
        if [ "${#steps[@]}" -gt 0 ] && [[ "${steps[-1]}" == pending:* ]]; then
          t=$(log_epoch "$line")
          steps[-1]=$(awk -v s="${steps[-1]#pending:}" -v e="$t" 'BEGIN { printf "%.0f", (e - s) * 1000 }')
        fi ;;
    esac
  done < "$log"
  local step_max=0 v
  for v in "${steps[@]}"; do [[ "$v" == pending:* ]] && continue; [ "$v" -gt "$step_max" ] && step_max=$v; done
  progress "$name: total $total ms, start $startup ms, model steps ${steps[*]} ms, peak RSS $((rss_kb / 1024)) MB"

  row "$name: files, MB" "$files" "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')" "" "" ""
  row "$name: a model step, the slowest, ms (other: git status)" "$step_max" "$status" \
    "$(awk -v a="$step_max" -v b="$status" 'BEGIN { printf "%.1f×", a / b }')" "≤2×" \
    "$(verdict "$(awk -v a="$step_max" -v b="$status" 'BEGIN { print a / b }')" 2)"
  row "$name: start to the first model call, ms (other: git worktree add)" "$startup" "$wt" \
    "$(awk -v a="$startup" -v b="$wt" 'BEGIN { printf "%+.0f", a - b }') ms" "≤ +500 ms" \
    "$(verdict "$(awk -v a="$startup" -v b="$wt" 'BEGIN { print a - b }')" 500)"
  row "$name: start from a spare (a second run), ms (other: git worktree add)" "$again_ms" "$wt" \
    "$(awk -v a="$again_ms" -v b="$wt" 'BEGIN { printf "%+.0f", a - b }') ms" "≤ +500 ms" \
    "$(verdict "$(awk -v a="$again_ms" -v b="$wt" 'BEGIN { print a - b }')" 500)"
  if [ "$name" = deps ]; then
    row "deps: start to the first model call, a first run, ms (seed 002's budget)" "$startup" "" "" "<2,000 ms" \
      "$(verdict "$startup" 1999.999)"
    row "deps: start from a spare, ms (seed 002's budget)" "$again_ms" "" "" "<2,000 ms" \
      "$(verdict "$again_ms" 1999.999)"
  fi
  row "$name: whole run to the diff gate, ms" "$total" "" "" "" ""
  row "$name: peak RSS, MB" "$((rss_kb / 1024))" "" "" "≤200 MB" "$(verdict "$((rss_kb / 1024))" 200)"
  cd "$root"
}

# Both gavel runs first, then git's own commands (their worktree removals slow later checkouts).
gavel_run deps "$deps"
gavel_run small "$small"
again deps "$deps"
again small "$small"
measure deps "$deps"
measure small "$small"

cd "$deps"
s=$EPOCHREALTIME
rg_files=$(rg --files | wc -l)
rg_ms=$(ms_since "$s")
row "deps: rg --files | wc -l, ms" "$rg_ms" "" "" "" "$rg_files files"
cd "$root"

# --- context validation (issue 34) ------------------------------------------------------------
# context_rows NAME DIR: validating DIR's whole tree as context, against listing it with rg.
# Each is warmed once, then the median of 3 is taken, of the wall time and of the CPU time (user
# + system, from /usr/bin/time: on a busy machine the wall time measures the neighbours too).
# `gavel-bench context .` times gavel_context::validate alone (the files it looked at, passed or
# refused: binaries, files over the size limit and secrets are refused, as they would be);
# `gavel lld 999 --context .` is the
# whole process, start-up included, and exits at the refusal (2) or, if everything passed, at
# the missing issue.
context_rows() {
  local name="$1" dir="$2" out files s rg_files
  local bench=() whole=() rg=() bench_cpu=() rg_cpu=()
  # cpu_ms: the last /usr/bin/time record's user + system time, in ms.
  cpu_ms() { awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$work/cpu"; }
  cd "$dir"
  "$bin/gavel-bench" context . > /dev/null
  for _ in 1 2 3; do
    out=$(/usr/bin/time -f "%U %S" -o "$work/cpu" "$bin/gavel-bench" context .)
    bench+=("$(sed -n 's/.* ms=\([0-9.]*\).*/\1/p' <<< "$out")") bench_cpu+=("$(cpu_ms)")
  done
  files=$(sed -n 's/^files=\([0-9]*\).*/\1/p' <<< "$out")
  "$gavel" lld 999 --context . --auto > /dev/null 2>&1 < /dev/null || true
  for _ in 1 2 3; do
    s=$EPOCHREALTIME
    "$gavel" lld 999 --context . --auto > /dev/null 2>&1 < /dev/null || true
    whole+=("$(ms_since "$s")")
  done
  rg --files | wc -l > /dev/null
  for _ in 1 2 3; do
    s=$EPOCHREALTIME; rg_files=$(/usr/bin/time -f "%U %S" -o "$work/cpu" rg --files | wc -l)
    rg+=("$(ms_since "$s")") rg_cpu+=("$(cpu_ms)")
  done
  local v w r vc rc
  v=$(median "${bench[@]}") w=$(median "${whole[@]}") r=$(median "${rg[@]}")
  vc=$(median "${bench_cpu[@]}") rc=$(median "${rg_cpu[@]}")
  local fps='BEGIN { if (ms > 0) printf "%.0f", n / (ms / 1000) }'
  progress "$name: context validation of $files files $v ms ($vc ms CPU; process $w ms), rg --files $rg_files files $r ms ($rc ms CPU)"
  row "$name: context validation of the tree, ms (other: rg --files | wc -l)" "$v" "$r" \
    "$(awk -v a="$v" -v b="$r" 'BEGIN { if (b > 0) printf "%.1f×", a / b }')" \
    "$([ "$name" = deps ] && echo "<2,000 ms")" \
    "$([ "$name" = deps ] && verdict "$v" 1999.999)"
  row "$name: the same, CPU time (user + system), ms (other: rg)" "$vc" "$rc" \
    "$(awk -v a="$vc" -v b="$rc" 'BEGIN { if (b > 0) printf "%.1f×", a / b }')" "" ""
  row "$name: the same, files per second (other: rg)" "$(awk -v n="$files" -v ms="$v" "$fps")" \
    "$(awk -v n="$rg_files" -v ms="$r" "$fps")" "" "" "$files / $rg_files files"
  row "$name: gavel lld --context ., whole process, ms" "$w" "" "" \
    "$([ "$name" = deps ] && echo "<2,000 ms")" "$([ "$name" = deps ] && verdict "$w" 1999.999)"
  cd "$root"
}
context_rows deps "$deps"
context_rows small "$small"

echo
echo "gavel on real-size repositories ($(date -u +%Y-%m-%d), $(nproc) cores$([ "$quick" = 1 ] && echo ", --quick"))"
echo
echo "| what | gavel | other | ratio | target | verdict |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
