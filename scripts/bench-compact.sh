#!/usr/bin/env bash
# bench-compact.sh: times hist-compact on one project of 60 files and 100k
# entries (the issue's benchmark), against the floor: cat of the same files
# (the ones compaction merges) into one file plus mv, in the same run.
#
# The project comes from scripts/genstore (deterministic; realistic prompt
# lengths, mostly 20-400 bytes, some multi-line, a few 10-50 KB). Every run
# starts from a fresh copy of it, so the page cache is warm for both sides.
# hist-compact fsyncs the compact file and the folder; the floor does not,
# so a third row adds that fsync to the floor (cat, sync FILE, mv).
#
# Usage: scripts/bench-compact.sh [OUT.md]   (default bench/compact.md)
# Environment: RUNS (default 9), N (default 100000), FILES (default 60),
#              KEEP=1 keeps the temp folder.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/compact.md}
RUNS=${RUNS:-9}
N=${N:-100000}
FILES=${FILES:-60}
export LC_ALL=C

if [ ! -x /usr/bin/time ]; then
    echo "bench-compact: installing time(1) for peak RSS" >&2
    if command -v apt-get >/dev/null; then
        apt-get install -y -qq time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
    fi
    [ -x /usr/bin/time ] || { echo "bench-compact: /usr/bin/time (GNU time) is needed" >&2; exit 1; }
fi
command -v go >/dev/null || { echo "bench-compact: go is needed" >&2; exit 1; }

WORK=$(mktemp -d /tmp/hist-bench-compact.XXXXXX)
cleanup() { [ "${KEEP:-}" = 1 ] && echo "kept $WORK" >&2 || rm -rf "$WORK"; }
trap cleanup EXIT
mkdir -p "$WORK/bin" "$WORK/home"
(cd "$ROOT" && go build -o "$WORK/bin/" ./cmd/hist-compact ./scripts/genstore)

"$WORK/bin/genstore" -out "$WORK/base" -n "$N" -projects 1 -files "$FILES" >/dev/null
PROJ=$(ls "$WORK/base/projects")
BYTES=$(cat "$WORK/base/projects/$PROJ"/*.jsonl | wc -c)
export HOME="$WORK/home" GENTLE_PI_HISTORY_CAPTURE=1

# The files compaction merges (the same for every fresh copy).
"$WORK/bin/hist-compact" --store "$WORK/base" --all --dry-run --json 2>/dev/null |
    grep -o '"name":"[^"]*"' | sed 's/"name":"\(.*\)"/\1/' >"$WORK/merged.txt"
MERGED=$(wc -l <"$WORK/merged.txt")
MERGED_BYTES=$(cd "$WORK/base/projects/$PROJ" && cat $(cat "$WORK/merged.txt") | wc -c)

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
maxof() { sort -n | tail -1; }

: >"$WORK/compact.txt"
: >"$WORK/floor.txt"
: >"$WORK/floorsync.txt"
FMT='%e %M %U %S'
for i in $(seq "$RUNS"); do
    rm -rf "$WORK/s"
    cp -a "$WORK/base" "$WORK/s"
    /usr/bin/time -f "$FMT" -o "$WORK/t" "$WORK/bin/hist-compact" --store "$WORK/s" --all 2>"$WORK/log"
    cat "$WORK/t" >>"$WORK/compact.txt"
    grep -q 'merged' "$WORK/log" || { cat "$WORK/log" >&2; exit 1; }
    LINE=$(cat "$WORK/log")

    rm -rf "$WORK/s"
    cp -a "$WORK/base" "$WORK/s"
    D="$WORK/s/projects/$PROJ"
    (cd "$D" && /usr/bin/time -f "$FMT" -o "$WORK/t" sh -c 'cat "$@" >.floor.tmp && mv .floor.tmp floor.jsonl' sh $(cat "$WORK/merged.txt"))
    cat "$WORK/t" >>"$WORK/floor.txt"

    rm -rf "$WORK/s"
    cp -a "$WORK/base" "$WORK/s"
    (cd "$D" && /usr/bin/time -f "$FMT" -o "$WORK/t" sh -c 'cat "$@" >.floor.tmp && sync .floor.tmp && mv .floor.tmp floor.jsonl && sync .' sh $(cat "$WORK/merged.txt"))
    cat "$WORK/t" >>"$WORK/floorsync.txt"
done

# stats FILE -> "median min max peakRSS(KB) medianCPU"
stats() {
    local med min max rss cpu
    med=$(awk '{print $1}' "$1" | median)
    min=$(awk '{print $1}' "$1" | sort -n | head -1)
    max=$(awk '{print $1}' "$1" | maxof)
    rss=$(awk '{print $2}' "$1" | maxof)
    cpu=$(awk '{print $3 + $4}' "$1" | median)
    echo "$med $min $max $rss $cpu"
}
read -r C_MED C_MIN C_MAX C_RSS C_CPU < <(stats "$WORK/compact.txt")
read -r F_MED F_MIN F_MAX F_RSS F_CPU < <(stats "$WORK/floor.txt")
read -r S_MED S_MIN S_MAX S_RSS S_CPU < <(stats "$WORK/floorsync.txt")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "n/a" }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f MB", k / 1024 }'; }
PASS_WALL=$(awk -v m="$C_MED" 'BEGIN { print (m <= 0.5) ? "yes" : "NO" }')
PASS_RSS=$(awk -v k="$C_RSS" 'BEGIN { print (k < 150 * 1024) ? "yes" : "NO" }')

# pressure: the share of the last 60 s some task waited for a CPU (PSI).
pressure() {
    [ -r /proc/pressure/cpu ] || return 0
    awk '/^some/ { sub("avg60=", "", $3); printf ", CPU pressure (some, avg60) %s%%", $3 }' /proc/pressure/cpu
}

mkdir -p "$(dirname "$OUT")"
cat >"$OUT" <<EOF
# hist-compact benchmark

\`scripts/bench-compact.sh\` ($RUNS runs, each on a fresh copy of the same
generated project). Project: $FILES files, $N entries,
$(awk -v b="$BYTES" 'BEGIN { printf "%.1f", b / 1048576 }') MiB (scripts/genstore -projects 1 -files $FILES). Compaction merges
the $MERGED oldest files ($(awk -v b="$MERGED_BYTES" 'BEGIN { printf "%.1f", b / 1048576 }') MiB); the 10 newest stay.
Floor: \`cat\` of the same $MERGED files into one file plus \`mv\` (no fsync,
no parsing), timed the same way in the same run.

| | median wall | min / max wall | median CPU (user+sys) | peak RSS |
|---|---|---|---|---|
| hist-compact | ${C_MED} s | ${C_MIN} / ${C_MAX} s | ${C_CPU} s | $(mb "$C_RSS") |
| floor: cat + mv | ${F_MED} s | ${F_MIN} / ${F_MAX} s | ${F_CPU} s | $(mb "$F_RSS") |
| hist-compact / floor | $(ratio "$C_MED" "$F_MED") | | $(ratio "$C_CPU" "$F_CPU") | $(ratio "$C_RSS" "$F_RSS") |
| floor + fsync: cat, sync, mv, sync dir | ${S_MED} s | ${S_MIN} / ${S_MAX} s | ${S_CPU} s | $(mb "$S_RSS") |
| hist-compact / floor + fsync | $(ratio "$C_MED" "$S_MED") | | $(ratio "$C_CPU" "$S_CPU") | $(ratio "$C_RSS" "$S_RSS") |

Targets: median wall <= 0.5 s: **${PASS_WALL}**; peak RSS < 150 MB: **${PASS_RSS}**.

hist-compact's line: \`$LINE\`

Machine: $(nproc) cores, $(uname -sr), $(go version | awk '{print $3}'),
load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)$(pressure). The machine
is shared: with other processes on the CPU, wall time is mostly time spent
waiting for a core (compare the CPU column). time(1) rounds to 10 ms.
EOF
cat "$OUT"
