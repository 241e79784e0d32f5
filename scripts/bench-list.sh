#!/usr/bin/env bash
# bench-list.sh: hist-list's two budgets and hist-stats', each beside its
# peer in the same run, medians of RUNS runs (a first run warms the page
# cache and is not counted):
#   `hist-list --all`, 100k prompts            <= 500 ms  peer: cat of the store's files
#   `hist-list --all | head -20`, 1M prompts   <= 50 ms   peer: cat of the files | head -20
#   `hist-stats --all`, 1M prompts             <= 1.5x    peer: `hist-list --all`
# Peak RSS (GNU time) of the first is shown too.
#
# Usage: scripts/bench-list.sh [OUT.md]   (default bench/list.md)
# Environment: RUNS (default 7), MIX (genstore's -mix, default realistic),
#              BENCH_DIR (default /tmp/hist-bench-list: the stores are kept
#              there between runs).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/list.md}
RUNS=${RUNS:-7}
MIX=${MIX:-realistic}
DIR=${BENCH_DIR:-/tmp/hist-bench-list}
export LC_ALL=C

if [ ! -x /usr/bin/time ]; then
    echo "bench-list: installing time(1) for peak RSS" >&2
    if command -v apt-get >/dev/null; then
        apt-get install -y -qq time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
    fi
    [ -x /usr/bin/time ] || { echo "bench-list: /usr/bin/time (GNU time) is needed" >&2; exit 1; }
fi

mkdir -p "$DIR/bin" "$DIR/home"
(cd "$ROOT" && go build -o "$DIR/bin/" ./cmd/hist-list ./cmd/hist-stats ./scripts/genstore)
export HOME="$DIR/home" GENTLE_PI_HISTORY_CAPTURE=1

# shellcheck source=scripts/benchlib.sh
. "$ROOT/scripts/benchlib.sh"
now() { echo "${EPOCHREALTIME/./}"; } # µs

# runs CMD: CMD run RUNS+1 times through sh; the milliseconds of each run
# but the first, one a line.
runs() {
    for i in $(seq 0 "$RUNS"); do
        t0=$(now)
        sh -c "$1" >/dev/null 2>&1 || true
        t1=$(now)
        [ "$i" = 0 ] || echo $(((t1 - t0) / 1000))
    done
}

# row MEASURE N BUDGET CMD PEER: a table row, CMD and PEER timed in turn.
# BUDGET is in ms, or "Nx" (tenths allowed: 1.5x) for at most N times PEER.
row() {
    local S="$DIR/store-$MIX-$2"
    genstore_once "$DIR/bin/genstore" "$S" "$MIX" "$2"
    find "$S/" -name '*.jsonl' | sort >"$DIR/files"
    local hist base verdict limit=$3
    hist=$(runs "${4//STORE/$S}" | median)
    base=$(runs "${5//STORE/$S}" | median)
    if [[ $3 == *x ]]; then # 1.5x: at most base*15/10
        local r=${3%x}
        [[ $r == *.* ]] || r=$r.0
        limit=$((base * ${r/./} / 10))
    fi
    verdict=ok
    [ "$hist" -le "$limit" ] || verdict=OVER
    local budget="$3 ms"
    [[ $3 == *x ]] && budget="$3 the peer ($limit ms)"
    printf '| %s | %s prompts, %s (%s files, %s) | %s | %s ms | %s ms | %s |\n' "$1" "$2" "$MIX" \
        "$(wc -l <"$DIR/files")" "$(du -sh "$S/" | cut -f1)" "$budget" "$hist" "$base" "$verdict" >>"$DIR/table.md"
}

{
    echo "| measure | store | budget | command | peer | |"
    echo "|---|---|---|---|---|---|"
} >"$DIR/table.md"
# catfiles: cat of the store files row lists.
printf '#!/bin/sh\nxargs -a "%s/files" -d "\\n" cat\n' "$DIR" >"$DIR/bin/catfiles"
chmod +x "$DIR/bin/catfiles"
row '`hist-list --all` (peer: cat of the files)' 100000 500 \
    "$DIR/bin/hist-list --all --store STORE" "$DIR/bin/catfiles"
row '`hist-list --all \| head -20` (peer: cat of the files \| head -20)' 1000000 50 \
    "$DIR/bin/hist-list --all --store STORE | head -20" "$DIR/bin/catfiles | head -20"
row '`hist-stats --all` (peer: `hist-list --all`)' 1000000 1.5x \
    "$DIR/bin/hist-stats --all --store STORE" "$DIR/bin/hist-list --all --store STORE"
/usr/bin/time -f '%M' -o "$DIR/rss" "$DIR/bin/hist-list" --all --store "$DIR/store-$MIX-100000" >/dev/null 2>&1
LOAD=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?)

{
    cat <<EOF
# hist-list and hist-stats: budgets

What is measured (\`scripts/bench-list.sh\`, medians of $RUNS runs after one
that warms the page cache): each budget's command, and beside it, in the same
run, its peer. Stores from \`scripts/genstore -mix $MIX\` (500 capture files
over 50 projects, about 15% repeats). Peak RSS of \`hist-list --all\` on the
100k store: $(($(cat "$DIR/rss") / 1024)) MB.

Machine: $(nproc) CPUs, $(uname -sm), $(date -u +%Y-%m-%d); load average at
the end: $LOAD.

EOF
    cat "$DIR/table.md"
} >"$OUT"
cat "$DIR/table.md"
