#!/usr/bin/env bash
# bench-list.sh: times hist-list --all on stores of 10k, 100k and 1M
# prompts, each of two mixes (genstore's default, where most prompts hold
# some non-ASCII text, and -mix realistic, mostly ASCII), beside its peer
# in the same run: cat of the same store files.
#
# Three measures per store, medians of RUNS runs (a first run warms the
# page cache and is not counted):
#   head   wall time of `hist-list --all | head -20` (the first screenful:
#          hist-list streams, so it needs only the end of each file)
#   all    wall time and peak RSS of `hist-list --all >/dev/null`
#   cat    wall time and peak RSS of `cat FILES >/dev/null`
#
# Usage: scripts/bench-list.sh [OUT.md]   (default bench/list.md)
# Environment: RUNS (default 7), SIZES (default "10000 100000 1000000"),
#              MIXES (default "default realistic"), BENCH_DIR (default
#              /tmp/hist-bench-list: the stores are kept there between runs).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/list.md}
RUNS=${RUNS:-7}
SIZES=${SIZES:-"10000 100000 1000000"}
MIXES=${MIXES:-"default realistic"}
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
(cd "$ROOT" && go build -o "$DIR/bin/" ./cmd/hist-list ./scripts/genstore)
export HOME="$DIR/home" GENTLE_PI_HISTORY_CAPTURE=1

# shellcheck source=scripts/benchlib.sh
. "$ROOT/scripts/benchlib.sh"
now() { echo "${EPOCHREALTIME/./}"; } # µs

{
    echo "| store | files, size | head: \`hist-list --all \| head -20\` | all: \`hist-list --all\` wall | all: peak RSS | cat of the files: wall | cat: peak RSS | all / cat |"
    echo "|---|---|---|---|---|---|---|---|"
} >"$DIR/table.md"
LOADS=""
for mix in $MIXES; do
    for n in $SIZES; do
        S="$DIR/store-$mix-$n"
        genstore_once "$DIR/bin/genstore" "$S" "$mix" "$n"
        find "$S/" -name '*.jsonl' | sort >"$DIR/files"
        NF=$(wc -l <"$DIR/files")
        SIZE=$(du -sh "$S/" | cut -f1)
        : >"$DIR/head"; : >"$DIR/all"; : >"$DIR/allrss"; : >"$DIR/cat"; : >"$DIR/catrss"
        for i in $(seq 0 "$RUNS"); do
            t0=$(now)
            { "$DIR/bin/hist-list" --all --store "$S" 2>/dev/null || true; } | head -20 >/dev/null
            t1=$(now)
            /usr/bin/time -f '%e %M' -o "$DIR/t" "$DIR/bin/hist-list" --all --store "$S" >/dev/null 2>"$DIR/err"
            t2=$(now)
            read -r _ rss <"$DIR/t"
            /usr/bin/time -f '%e %M' -o "$DIR/tc" xargs -a "$DIR/files" -d '\n' cat >/dev/null
            t3=$(now)
            read -r _ crss <"$DIR/tc"
            [ "$i" = 0 ] && continue # warms the page cache
            echo $(((t1 - t0) / 1000)) >>"$DIR/head"
            echo $(((t2 - t1) / 1000)) >>"$DIR/all"
            echo $((rss / 1024)) >>"$DIR/allrss"
            echo $(((t3 - t2) / 1000)) >>"$DIR/cat"
            echo $((crss / 1024)) >>"$DIR/catrss"
        done
        LOADS="$LOADS $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?)"
        all=$(median <"$DIR/all")
        cat=$(median <"$DIR/cat")
        printf "| %s prompts, %s | %s, %s | %s ms (%s) | %s ms (%s) | %s MB (max %s) | %s ms (%s) | %s MB | %s |\n" \
            "$n" "$mix" "$NF" "$SIZE" \
            "$(median <"$DIR/head")" "$(spread <"$DIR/head")" \
            "$all" "$(spread <"$DIR/all")" \
            "$(median <"$DIR/allrss")" "$(sort -n "$DIR/allrss" | tail -1)" \
            "$cat" "$(spread <"$DIR/cat")" "$(median <"$DIR/catrss")" \
            "$(awk -v a="$all" -v c="$cat" 'BEGIN {printf "%.1fx", (c > 0) ? a / c : 0}')" >>"$DIR/table.md"
    done
done

{
    cat <<EOF
# hist-list: streaming the whole history

What is measured (\`scripts/bench-list.sh\`, medians of $RUNS runs after one
that warms the page cache, with min-max): the wall time of
\`hist-list --all | head -20\` (the first screenful), the wall time and peak RSS
(GNU time) of \`hist-list --all >/dev/null\`, and beside it, in the same run,
\`cat\` of the same store files to /dev/null (the floor: reading the bytes).
Stores from \`scripts/genstore\` (500 capture files over 50 projects, about
15% repeats): the default mix, where most prompts hold some non-ASCII
text, and \`-mix realistic\`, where one prompt in eight does.

Goals at 1M prompts: head under 50 ms; all at most 2x cat, peak RSS under
64 MB.

Machine: $(nproc) CPUs, $(uname -sm), $(date -u +%Y-%m-%d); load average at
the end of each store's runs:$LOADS.

EOF
    cat "$DIR/table.md"
} >"$OUT"
cat "$DIR/table.md"
