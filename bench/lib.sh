# What every benchmark script shares (sourced, like bench/pg.sh):
#
#   bench_home DIR     # HOME and git's global config in DIR: a bench identity, no signing, no
#                      #   background gc or maintenance (it would race the timings and clean-up)
#   median N...        # the median of the numbers given
#   ms_since START     # milliseconds since START (a $EPOCHREALTIME), two decimals
#   settle_fs DIR MAX  # waits (at most MAX seconds) until a new file in DIR costs what it costs
#                      #   on a quiet filesystem; prints what it measured

bench_home() {
  export HOME="$1/home" GIT_CONFIG_GLOBAL="$1/gitconfig" GIT_CONFIG_NOSYSTEM=1
  mkdir -p "$HOME"
  printf '[user]\n\tname = bench\n\temail = bench@gavel.invalid\n[commit]\n\tgpgsign = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n' > "$GIT_CONFIG_GLOBAL"
}

median() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

ms_since() { awk -v s="$1" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.2f\n", (e - s) * 1000 }'; }

# On ext4 without a journal (this project's CI machine) the inode allocator skips, one by one
# and by reading each one's inode table entry, every inode deleted in the last minute, or in
# the last six while that table block has changes not yet written back, which any new file
# in the block brings back. After a build or a test suite deleted thousands of files, a new
# file costs 150 to 350 µs instead of about 20, and a row that creates files measures the
# filesystem. New folders are spread over the disk's block groups (and their files with them),
# so a probe in one folder can find its group quiet while others are not: settle_fs runs
# `sync`, then times the creation of 16 new folders with 4 empty files each under DIR (kept:
# deleting them would start the wait again) every 15 s, until two probes in a row find a folder
# or file costing under 25 µs on average (a quiet filesystem here: 11 to 18 µs; a probe of
# 45 to 50 µs still saw gavel runs of 21 to 35 ms instead of 13) and at least a minute has
# passed since the `sync`, ext4's own window for a deleted inode, which a probe in other
# folders cannot see (on 2026-11-26, three of the five full runs whose probes passed at once,
# after 15 s, took 12.8 to 13.4 ms a gavel run; every one that had to wait, 10.3 to 11.3 ms),
# or MAX seconds have passed. It prints the last probe (to stderr).
settle_fs() {
  local dir="$1" max="$2" waited=0 k=0 us quiet=0
  sync
  while :; do
    k=$((k + 1))
    us=$("${py:-python3}" -c '
import os, sys, time
d = sys.argv[1]
os.makedirs(d)
t = time.perf_counter()
for i in range(16):
    sub = os.path.join(d, str(i))
    os.mkdir(sub)
    for j in range(4):
        os.close(os.open(os.path.join(sub, str(j)), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644))
print(round((time.perf_counter() - t) / 80 * 1e6))' "$dir/settle-probe/$k")
    if [ "$us" -lt 25 ]; then quiet=$((quiet + 1)); else quiet=0; fi
    if { [ "$quiet" -ge 2 ] && [ "$waited" -ge 60 ]; } || [ "$waited" -ge "$max" ]; then
      echo "filesystem: a new folder or file costs ${us} µs (probed after ${waited}s)" >&2
      return 0
    fi
    sleep 15
    waited=$((waited + 15))
  done
}
