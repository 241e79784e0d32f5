#!/usr/bin/env bash
# Benchmark: the time from starting hist-pick to its first full screen
# (the header and 10 list rows) in a real terminal (tmux), on a store of
# 10k and of 1M prompts, beside Debian's fzf binary reading the same
# prompts from a file (the peer; hist never uses an fzf binary).
#
#   scripts/bench-pick.sh            # RUNS=11 runs each, median and spread
#   RUNS=21 BENCH_DIR=/var/tmp/b scripts/bench-pick.sh
#
# The stores come from scripts/genstore (deterministic; kept in BENCH_DIR
# between runs). The first run of each case warms the page cache and is
# not counted. How it measures: the shell records $EPOCHREALTIME, then
# runs the program; a Go stopwatch (TestBenchFirstScreen) polls tmux
# capture-pane until the screen shows the header and the tenth list row,
# and takes the time again. One poll costs a few milliseconds.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-11}
DIR=${BENCH_DIR:-/tmp/hist-bench-pick}
SIZES=${SIZES:-"10000 1000000"}
mkdir -p "$DIR/bin"

need() {
  command -v "$1" >/dev/null && return
  echo "installing $1 (apt-get)" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}
need tmux
need fzf

go build -o "$DIR/bin/" ./cmd/hist-pick ./cmd/hist-list
for n in $SIZES; do
  if [ ! -d "$DIR/store-$n/projects" ]; then
    echo "generating a store of $n prompts" >&2
    rm -rf "$DIR/store-$n"
    go run ./scripts/genstore -out "$DIR/store-$n" -n "$n"
  fi
  if [ ! -s "$DIR/prompts-$n.txt" ]; then
    GENTLE_PI_HISTORY_CAPTURE=1 "$DIR/bin/hist-list" --all --store "$DIR/store-$n" >"$DIR/prompts-$n.txt"
  fi
done

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f ms (min %.0f, max %.0f, %d runs)", m, a[1], a[NR], NR}'; }

# bench MATCH CMD: the stopwatch is TestBenchFirstScreen in
# cmd/hist-pick/tmux_test.go (Go, so polling tmux costs little).
go test -c -o "$DIR/bin/pick.test" ./cmd/hist-pick
bench() {
  PATH="$DIR/bin:$PATH" HIST_PICK_BENCH_MATCH="$1" HIST_PICK_BENCH_CMD="$2" HIST_PICK_BENCH_RUNS="$RUNS" \
    "$DIR/bin/pick.test" -test.run '^TestBenchFirstScreen$' -test.count=1 |
    awk '/^first-screen-ms/ {print $2}' | median
}

echo "| store | hist-pick (embedded fzf v0.65.2, streaming) | fzf $(fzf --version | cut -d' ' -f1) binary (Debian), prompts from a file |"
echo "|---|---|---|"
for n in $SIZES; do
  hp=$(bench "Prompt history" "hist-pick --all --store $DIR/store-$n")
  fz=$(bench ">" "fzf --height=30 --layout=reverse --header='Prompt history' <$DIR/prompts-$n.txt")
  printf "| %s prompts (%s) | %s | %s |\n" "$n" "$(du -sh "$DIR/store-$n" | cut -f1)" "$hp" "$fz"
done
