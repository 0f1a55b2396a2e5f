# What every benchmark script shares (sourced, like bench/pg.sh):
#
#   bench_home DIR     # HOME and git's global config in DIR: a bench identity, no signing, no
#                      #   background gc or maintenance (it would race the timings and clean-up)
#   median N...        # the median of the numbers given
#   ms_since START     # milliseconds since START (a $EPOCHREALTIME), two decimals

bench_home() {
  export HOME="$1/home" GIT_CONFIG_GLOBAL="$1/gitconfig" GIT_CONFIG_NOSYSTEM=1
  mkdir -p "$HOME"
  printf '[user]\n\tname = bench\n\temail = bench@gavel.invalid\n[commit]\n\tgpgsign = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n' > "$GIT_CONFIG_GLOBAL"
}

median() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

ms_since() { awk -v s="$1" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.2f\n", (e - s) * 1000 }'; }
