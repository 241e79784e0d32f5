#!/usr/bin/env bash
# bench-foundation.sh: times the foundation's binaries as whole processes
# against baselines measured in the same run, and writes bench/foundation.md.
#
#   - hist-capture (capture on, one prompt into an existing project file)
#     against scripts/minappend, the least a Go program can do: open a file
#     O_APPEND and write one line.
#   - hist-list --all on stores of 10k, 100k and 1M prompts (scripts/genstore:
#     500 capture files in 50 projects, realistic lengths, ~15% repeats)
#     against `cat` of the same files (the floor: reading the bytes) and
#     against `jq -r .text FILES | awk '!seen[$0]++'` (a naive dedup).
#   - the go test benchmarks of the capture append path and the reader.
#
# Times are medians (hyperfine, installed with apt-get when missing; a plain
# timing loop otherwise); peak RSS comes from GNU time. The stores are built
# under $HIST_BENCH_DIR (default /tmp/hist-bench-foundation), never in the
# repository, and kept for the next run (rebuilt when the generator changes).
#
# Usage: scripts/bench-foundation.sh [OUT.md]   (default bench/foundation.md)
# Environment: HIST_BENCH_DIR, SIZES (default "10k 100k 1m"), RUNS (list
#              runs, default 7), CAPTURE_RUNS (default 60), SKIP_GOBENCH=1.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/foundation.md}
WORK=${HIST_BENCH_DIR:-/tmp/hist-bench-foundation}
SIZES=${SIZES:-"10k 100k 1m"}
RUNS=${RUNS:-7}
CAPTURE_RUNS=${CAPTURE_RUNS:-60}
export LC_ALL=C

log() { echo "bench-foundation: $*" >&2; }

install_missing() {
    local need=()
    command -v hyperfine >/dev/null 2>&1 || need+=(hyperfine)
    command -v jq >/dev/null 2>&1 || need+=(jq)
    [ -x /usr/bin/time ] || need+=(time)
    [ ${#need[@]} -eq 0 ] && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing ${need[*]}"
        apt-get update -qq >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 || true
    fi
}
install_missing
command -v jq >/dev/null 2>&1 || { log "jq is needed for the baseline: apt-get install jq"; exit 1; }
[ -x /usr/bin/time ] || { log "GNU time is needed for peak RSS: apt-get install time"; exit 1; }
HAVE_HYPERFINE=0
command -v hyperfine >/dev/null 2>&1 && HAVE_HYPERFINE=1

mkdir -p "$WORK/bin" "$WORK/home"
BIN=$WORK/bin
log "building into $BIN"
(cd "$ROOT" && go build -o "$BIN/" ./cmd/hist-capture ./cmd/hist-list ./scripts/minappend ./scripts/genstore)

# Capture on through the saved preference, as a user has it.
export HOME=$WORK/home
unset GENTLE_PI_HISTORY_CAPTURE PI_CODING_AGENT_DIR GENTLE_PI_CONFIG_HOME GOMEMLIMIT GOGC
"$BIN/hist-capture" --enable 2>/dev/null

# median: of the numbers on stdin.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# timeit NAME RUNS WARMUP SHELL CMD: median wall seconds of CMD, into $WORK/NAME.median.
# SHELL=1 runs CMD through sh -c (pipelines), else as a plain command line.
timeit() {
    local name=$1 runs=$2 warmup=$3 shell=$4 cmd=$5
    if [ "$HAVE_HYPERFINE" = 1 ]; then
        local opt=(-N)
        [ "$shell" = 1 ] && opt=()
        hyperfine "${opt[@]}" --style none --warmup "$warmup" --runs "$runs" \
            --export-json "$WORK/$name.json" "$cmd" >/dev/null 2>&1
        jq -r '.results[0].median' "$WORK/$name.json" >"$WORK/$name.median"
    else
        local i t0 t1
        for ((i = 0; i < warmup; i++)); do sh -c "$cmd" >/dev/null 2>&1; done
        for ((i = 0; i < runs; i++)); do
            t0=${EPOCHREALTIME/./}
            sh -c "$cmd" >/dev/null 2>&1
            t1=${EPOCHREALTIME/./}
            echo "$(((t1 - t0)))"
        done | awk '{print $1 / 1e6}' | median >"$WORK/$name.median"
    fi
}

# rss NAME CMD: peak RSS in MB of one run of CMD (through sh -c); its CPU
# time (user + sys, all threads) goes to $WORK/NAME.cpu.
rss() {
    /usr/bin/time -f '%M %U %S' -o "$WORK/$1.rss" sh -c "$2" >/dev/null 2>&1
    awk '{printf "%.2f", $2 + $3}' "$WORK/$1.rss" >"$WORK/$1.cpu"
    awk '{printf "%.0f", $1 / 1024}' "$WORK/$1.rss"
}
cpu() { cat "$WORK/$1.cpu"; }
get() { cat "$WORK/$1.median"; }
ms() { awk -v s="$1" 'BEGIN {printf "%.2f ms", s * 1000}'; }
dur() { awk -v s="$1" 'BEGIN {if (s < 1) printf "%.1f ms", s * 1000; else printf "%.2f s", s}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

# --- stores -----------------------------------------------------------------
GENSUM=$(sha256sum "$ROOT/scripts/genstore/main.go" | cut -c1-16)
count_of() { case $1 in 10k) echo 10000 ;; 100k) echo 100000 ;; 1m) echo 1000000 ;; *) echo "$1" ;; esac; }
for size in $SIZES; do
    dir=$WORK/store-$size
    stamp="n=$(count_of "$size") seed=1 gen=$GENSUM"
    if [ "$(cat "$dir/.stamp" 2>/dev/null)" != "$stamp" ]; then
        log "generating the $size store"
        rm -rf "$dir"
        "$BIN/genstore" -out "$dir" -n "$(count_of "$size")" -seed 1
        echo "$stamp" >"$dir/.stamp"
    fi
done

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# --- capture ----------------------------------------------------------------
log "capture: hist-capture vs minappend ($CAPTURE_RUNS runs each)"
CAP=$WORK/capture
rm -rf "$CAP" && mkdir -p "$CAP/proj"
PROMPT='fix the flaky test in lib/store/store_test.go and explain the race'
LINE='{"v":1,"text":"fix the flaky test in lib/store/store_test.go and explain the race","ts":1700000000000}'
CAPCMD="$BIN/hist-capture --store $CAP/store --cwd $CAP/proj --instance bench '$PROMPT'"
MINCMD="$BIN/minappend $CAP/min.jsonl '$LINE'"
"$BIN/hist-capture" --store "$CAP/store" --cwd "$CAP/proj" --instance bench "$PROMPT" # first capture: folders, registry
for i in 1 2; do # interleave, so drift in the machine's load hits both
    timeit "capture$i" "$((CAPTURE_RUNS / 2))" 5 0 "$CAPCMD"
    timeit "minappend$i" "$((CAPTURE_RUNS / 2))" 5 0 "$MINCMD"
done
CAP_MED=$(printf '%s\n%s\n' "$(get capture1)" "$(get capture2)" | awk '{s += $1} END {print s / NR}')
MIN_MED=$(printf '%s\n%s\n' "$(get minappend1)" "$(get minappend2)" | awk '{s += $1} END {print s / NR}')
CAP_RSS=$(rss capture "$CAPCMD")
MIN_RSS=$(rss minappend "$MINCMD")
lines=$(cat "$CAP/store/projects/"*/bench*.jsonl | wc -l) # bench@MACHINE.jsonl
log "capture: $(ms "$CAP_MED") vs $(ms "$MIN_MED") ($lines lines captured)"

# --- list -------------------------------------------------------------------
declare -A L_MED L_RSS C_MED J_MED J_RSS N_OUT N_FILES N_BYTES
for size in $SIZES; do
    dir=$WORK/store-$size
    files=$(cd "$dir" && find projects -name '*.jsonl' | sort | sed "s|^|$dir/|" | tr '\n' ' ')
    N_FILES[$size]=$(echo "$files" | wc -w)
    N_BYTES[$size]=$(du -cb $files | tail -1 | cut -f1)
    N_OUT[$size]=$("$BIN/hist-list" --all --store "$dir" | wc -l)
    runs=$RUNS
    jruns=$RUNS
    [ "$size" = 1m ] && jruns=5
    log "list $size: hist-list, cat, jq|awk ($runs runs; jq $jruns)"
    timeit "list-$size" "$runs" 2 0 "$BIN/hist-list --all --store $dir"
    timeit "cat-$size" "$runs" 2 0 "cat $files"
    timeit "jq-$size" "$jruns" 1 1 "jq -r .text $files | awk '!seen[\$0]++'"
    L_MED[$size]=$(get "list-$size")
    C_MED[$size]=$(get "cat-$size")
    J_MED[$size]=$(get "jq-$size")
    L_RSS[$size]=$(rss "list-$size" "$BIN/hist-list --all --store $dir")
    J_RSS[$size]=$(rss "jq-$size" "jq -r .text $files | awk '!seen[\$0]++'")
    log "list $size: $(dur "${L_MED[$size]}") (cat $(dur "${C_MED[$size]}"), jq $(dur "${J_MED[$size]}")), ${L_RSS[$size]} MB"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- go test -bench ---------------------------------------------------------
GOBENCH=""
if [ "${SKIP_GOBENCH:-}" != 1 ]; then
    log "go test -bench"
    GOBENCH=$(cd "$ROOT" && go test -run '^$' -bench 'CaptureAppend|^BenchmarkAppend$|Marshal|ParseView|Scan|Read$|AppendNormalized' \
        -benchmem ./lib/store ./lib/record ./lib/history ./lib/identity 2>&1 |
        grep -E '^(Benchmark|ok|FAIL|pkg:)' || true)
fi

# --- report -----------------------------------------------------------------
mkdir -p "$(dirname "$OUT")"
{
    echo "## Foundation: hist-capture and hist-list"
    echo
    echo "Generated by \`scripts/bench-foundation.sh\` on $(date -u +%Y-%m-%d) ($(nproc) CPUs, $(go version | cut -d' ' -f3)," \
        "$([ "$HAVE_HYPERFINE" = 1 ] && hyperfine --version || echo 'timing loop')). Load average at start $LOAD_START, at end $LOAD_END" \
        "(other work shares this machine). Medians of the wall time; peak RSS from GNU time."
    echo
    echo "### Capture: one prompt, the whole process ($CAPTURE_RUNS runs each)"
    echo
    echo "| command | median | peak RSS |"
    echo "|---|---:|---:|"
    echo "| \`hist-capture\` (capture on, existing project file) | $(ms "$CAP_MED") | ${CAP_RSS} MB |"
    echo "| baseline: \`minappend\` (one O_APPEND write) | $(ms "$MIN_MED") | ${MIN_RSS} MB |"
    echo
    echo "hist-capture reads the preference, resolves the project folder, names the instance from"
    echo "/proc, appends the record (checking the file's last byte) and checks registry.json."
    echo
    echo "Budget: one capture, the whole process, <= 10 ms. hist-capture / minappend = $(ratio "$CAP_MED" "$MIN_MED")x."
    echo
    echo "### List: \`hist-list --all\` (500 capture files, 50 projects)"
    echo
    echo "| store | size | prompts listed | hist-list | CPU | peak RSS | cat (floor) | jq \\| awk | CPU | peak RSS | hist-list / cat | jq / hist-list |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for size in $SIZES; do
        echo "| $size | $(awk -v b="${N_BYTES[$size]}" 'BEGIN {printf "%.1f MB", b / 1e6}') | ${N_OUT[$size]} |" \
            "$(dur "${L_MED[$size]}") | $(cpu "list-$size") s | ${L_RSS[$size]} MB | $(dur "${C_MED[$size]}") |" \
            "$(dur "${J_MED[$size]}") | $(cpu "jq-$size") s | ${J_RSS[$size]} MB |" \
            "$(ratio "${L_MED[$size]}" "${C_MED[$size]}")x | **$(ratio "${J_MED[$size]}" "${L_MED[$size]}")x** |"
    done
    echo
    echo "No budget for these rows: hist-list's are in bench/list.md (scripts/bench-list.sh)."
    echo "CPU is user + sys time of one run (all threads: hist-list reads a large scope on every CPU),"
    echo "which load from other work on the machine inflates less than wall time."
    echo "The jq pipeline prints every line of a multi-line prompt separately, so its output is not the"
    echo "same list: it is the lower bound of a naive tool, not an equivalent one."
    if [ -n "$GOBENCH" ]; then
        echo
        echo "### go test -bench"
        echo
        echo '```'
        echo "$GOBENCH"
        echo '```'
    fi
} >"$OUT"
log "wrote $OUT"
cat "$OUT"
