#!/usr/bin/env bash
# bench-seed.sh: times hist-seed --all-projects over ~1 GB of generated
# transcripts per source (pi, Claude Code, Codex, cursor-agent, opencode),
# against the scan floor (grep -c for the record that holds a typed prompt;
# for the SQLite sources, one sqlite3 counting the records that hold one)
# and a filter that selects the same records (jq; a sqlite3 query with
# json_extract), over the same files, in the same run.
#
# The transcripts are the fixtures in testscripts/testdata/seed (cursor's:
# the chats of its reader's tests, as cursor-agent cannot be installed
# here), replicated by scripts/genseed with fresh session ids and uuids,
# fresh prompt tags (so every copy is a distinct prompt event) and cwds
# spread over 200 projects, in each agent's layout: opencode one
# opencode.db, cursor one store.db a chat, both SQLite in WAL mode. They
# live under a temp folder in /tmp and are deleted at the end. Each full
# import must report as many prompts as were generated, and write as many
# to the store, or the run stops.
#
# Usage: scripts/bench-seed.sh [SOURCE...]   (default: pi claude codex cursor opencode)
#   SIZE_MB=20 RUNS=1 INC_RUNS=1 WATCH_PROMPTS=0 scripts/bench-seed.sh cursor opencode
# Environment: SIZE_MB (default 1024), RUNS (default 3; jq runs once),
#              INC_RUNS (default 11: the incremental runs, alternated),
#              PROJECTS (default 200), KEEP=1 keeps the temp folder,
#              SAME_TIMES=1 keeps the fixtures' times in every copy,
#              DATA=DIR reads the corpus a run kept (KEEP=1: DIR is its
#              temp folder's data/) instead of generating it (the prompts
#              reported are then checked against the store's alone),
#              WATCH_PROMPTS (default 50): the prompts the watch's latency
#              is measured over (0: no watch table).
# Prints one markdown table row per source (see bench/seed.md), then the
# incremental runs on the last store of each source: a run with nothing
# new beside find printing each file's size and mtime, and a run after one
# prompt is appended to one transcript; then, on the same store, the
# latency of hist-seed --watch (no hook wired): from a prompt's write to a
# transcript until hist-list shows it.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE_MB=${SIZE_MB:-1024}
RUNS=${RUNS:-3}
INC_RUNS=${INC_RUNS:-11}
PROJECTS=${PROJECTS:-200}
# scripts/bench.sh passes the report's path: this driver only prints its
# table (bench/seed.md, which explains it, is written from it by hand).
if [ $# -gt 0 ] && [[ $1 == *.md ]]; then
    echo "bench-seed: the table goes to standard output; $1 is written from it by hand" >&2
    shift
fi
SOURCES=("$@")
[ ${#SOURCES[@]} -gt 0 ] || SOURCES=(pi claude codex cursor opencode)
export LC_ALL=C

for tool in go grep jq sqlite3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench-seed: $tool is needed" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/hist-bench-seed.XXXXXX)
cleanup() { [ "${KEEP:-}" = 1 ] && echo "kept $WORK" >&2 || rm -rf "$WORK"; }
trap cleanup EXIT

mkdir -p "$WORK/bin" "$WORK/home"
(cd "$ROOT" && go build -o "$WORK/bin/" ./cmd/hist-seed ./cmd/hist-list ./scripts/genseed)

# sqlscan DIR NAME QUERY: runs QUERY (its tables are c.TABLE) over every
# SQLite database named NAME under DIR, in one sqlite3: each is attached
# immutable (read in place: no lock, no copy, nothing written beside it).
cat >"$WORK/bin/sqlscan" <<'EOF'
#!/bin/sh
find "$1" -type f -name "$2" | sed -e 's/%/%25/g' -e 's/?/%3f/g' -e 's/#/%23/g' -e "s/'/''/g" |
    awk -v q="$3" '{printf "ATTACH '\''file:%s?immutable=1'\'' AS c;\n%s;\nDETACH c;\n", $0, q}' |
    sqlite3 -batch -bail
EOF
chmod +x "$WORK/bin/sqlscan"

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# timed OUT CMD...: appends "wall-seconds peak-RSS-KB cpu-seconds" to OUT.
# The wall time is taken by the shell, to the microsecond (GNU time
# prints it to the hundredth of a second).
timed() {
    local out=$1 t0 t1
    shift
    t0=${EPOCHREALTIME/./}
    /usr/bin/time -f '%M %U %S' -o "$WORK/t" "$@" >/dev/null 2>"$WORK/err" || {
        echo "bench-seed: $* failed:" >&2
        cat "$WORK/err" >&2
        exit 1
    }
    t1=${EPOCHREALTIME/./}
    awk -v us=$((t1 - t0)) '{printf "%.4f %s %.2f\n", us / 1e6, $1, $2 + $3}' "$WORK/t" >>"$out"
}

# Every source's transcripts are generated first, and nothing is deleted
# until the end: ext4 takes much longer to create inodes in the minutes
# after many were deleted, which would be measured as hist-seed's.
# jsonl_filter DIR FILTER: jq's selection of the records over DIR's
# transcripts.
jsonl_filter=(sh -c 'find "$1" -type f -name "*.jsonl" -print0 | xargs -0 jq -c "$2"' sh)
setup() { # SOURCE: sets fixtures, want, pattern, floor, filter, envs
    data="${DATA:-$WORK/data}/$1"
    local seed=$ROOT/testscripts/testdata/seed
    # want: the prompts hist-seed imports from one copy of the fixtures
    # (what hist-list shows of each of their projects).
    want=0
    case $1 in
    pi)
        fixtures=(-in "$seed/pi")
        want=$(cat "$seed"/want/pi-{alpha,beta}.txt | wc -l)
        pattern='"role":"user"'
        floor=(grep -r -c -F "$pattern" "$data")
        filter=("${jsonl_filter[@]}" "$data" 'select(.type=="message" and .message.role=="user")')
        envs=(PI_CODING_AGENT_SESSION_DIR="$data/sessions")
        ;;
    claude)
        fixtures=(-in "$seed/claude")
        want=$(cat "$seed"/want/claude-{alpha,beta}.txt | wc -l)
        pattern='"type":"user"'
        floor=(grep -r -c -F "$pattern" "$data")
        filter=("${jsonl_filter[@]}" "$data" 'select(.type=="user")')
        envs=(CLAUDE_CONFIG_DIR="$data")
        ;;
    codex)
        fixtures=(-in "$seed/codex")
        want=$(cat "$seed"/want/codex-{alpha,beta}.txt | wc -l)
        pattern='"type":"UserMessage"'
        floor=(grep -r -c -F "$pattern" "$data")
        filter=("${jsonl_filter[@]}" "$data" 'select(.type=="event_msg" and .payload.type=="item_completed" and .payload.item.type=="UserMessage")')
        envs=(CODEX_HOME="$data")
        ;;
    cursor)
        fixtures=() # genseed holds cursor's chats
        floor=("$WORK/bin/sqlscan" "$data" store.db "SELECT count(*) FROM c.blobs WHERE instr(data, '\"role\":\"user\"') > 0")
        filter=("$WORK/bin/sqlscan" "$data" store.db "SELECT CAST(data AS TEXT) FROM c.blobs WHERE json_valid(CAST(data AS TEXT)) AND json_extract(CAST(data AS TEXT), '\$.role') = 'user'")
        envs=(CURSOR_CONFIG_DIR="$data")
        ;;
    opencode)
        fixtures=(-in "$seed/opencode" -in "$seed/opencode-tui")
        want=$(cat "$seed"/want/opencode-{alpha,beta,tui}.txt | wc -l)
        floor=("$WORK/bin/sqlscan" "$data" opencode.db "SELECT count(*) FROM c.message WHERE instr(data, '\"role\":\"user\"') > 0")
        filter=("$WORK/bin/sqlscan" "$data" opencode.db "SELECT p.data FROM c.message m JOIN c.part p ON p.message_id = m.id JOIN c.session s ON s.id = m.session_id
            WHERE s.parent_id IS NULL AND json_extract(m.data, '\$.role') = 'user' AND json_extract(p.data, '\$.type') = 'text'
            AND NOT coalesce(json_extract(p.data, '\$.synthetic'), 0) AND NOT coalesce(json_extract(p.data, '\$.ignored'), 0) ORDER BY m.id, p.id")
        envs=(XDG_DATA_HOME="$data")
        ;;
    *)
        echo "bench-seed: unknown source $1 (pi, claude, codex, cursor, opencode)" >&2
        exit 2
        ;;
    esac
}
same=()
[ "${SAME_TIMES:-}" = 1 ] && same=(-same-times)
declare -A gen_bytes gen_files gen_prompts last_store
for src in "${SOURCES[@]}"; do
    setup "$src"
    if [ -n "${DATA:-}" ]; then
        read -r bytes nfiles < <(find "$data" -type f -printf '%s\n' | awk '{s += $1; n++} END {print s, n}')
        prompts=
    else
        read -r bytes nfiles prompts < <("$WORK/bin/genseed" -src "$src" "${fixtures[@]}" -out "$data" -mb "$SIZE_MB" -projects "$PROJECTS" -want "$want" "${same[@]}")
    fi
    gen_bytes[$src]=$bytes
    gen_files[$src]=$nfiles
    gen_prompts[$src]=$prompts
done
# Write the generated files back (so that the seed's fsyncs do not wait
# for them).
sync

# check_prompts SOURCE STORE: the prompts the import reported (its
# summary line, in $WORK/err) and wrote to STORE's seed files must be the
# prompts generated.
check_prompts() {
    local reported stored
    reported=$(sed -n "s/^hist-seed: $1: .*read .*: \([0-9]*\) prompts\{0,1\}\( (.*\)\{0,1\}\$/\1/p" "$WORK/err")
    stored=$(find "$2/projects" -type f -name 'seed*.jsonl' -print0 | xargs -0 cat | wc -l)
    echo "bench-seed: $1: prompts generated: ${gen_prompts[$1]:-unknown (DATA)}, reported by hist-seed: ${reported:-none}, in the store: $stored" >&2
    if [ "$reported" != "$stored" ] || { [ -n "${gen_prompts[$1]}" ] && [ "${gen_prompts[$1]}" != "$reported" ]; }; then
        echo "bench-seed: $1: FAILED: the prompts generated, reported and stored differ; hist-seed said:" >&2
        grep -v ' written to ' "$WORK/err" >&2
        exit 1
    fi
}

echo "| source | data | files | prompts | hist-seed (median of $RUNS) | MB/s | grep -c / sqlite3 count | x floor | jq / sqlite3 json | filter / hist-seed | peak RSS | CPU s: hist-seed / floor / filter |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for src in "${SOURCES[@]}"; do
    setup "$src"
    bytes=${gen_bytes[$src]}
    nfiles=${gen_files[$src]}
    mbytes=$(awk -v b="$bytes" 'BEGIN {printf "%.0f", b/1e6}')
    # Warm the page cache: every run reads from memory.
    find "$data" -type f -print0 | xargs -0 cat >/dev/null

    : >"$WORK/seed.times"
    : >"$WORK/grep.times"
    for i in $(seq "$RUNS"); do
        # A fresh store each run, in a fresh folder; the writes of the
        # previous run on disk first.
        store="$WORK/stores/$src.$i"
        mkdir -p "$WORK/stores"
        sync
        timed "$WORK/seed.times" env -i HOME="$WORK/home" PATH="$PATH" GENTLE_PI_HISTORY_CAPTURE=1 "${envs[@]}" \
            "$WORK/bin/hist-seed" --all-projects --from "$src" --store "$store"
        check_prompts "$src" "$store"
        timed "$WORK/grep.times" "${floor[@]}"
    done
    prompts=$(find "$store/projects" -type f -name 'seed*.jsonl' -print0 | xargs -0 cat | wc -l)
    projects=$(find "$store/projects" -mindepth 1 -maxdepth 1 -type d | wc -l)
    : >"$WORK/jq.times"
    timed "$WORK/jq.times" "${filter[@]}"

    # Every run, on stderr: the spread the medians hide.
    echo "bench-seed: $src: hist-seed runs (s): $(cut -d' ' -f1 "$WORK/seed.times" | tr '\n' ' ')floor runs (s): $(cut -d' ' -f1 "$WORK/grep.times" | tr '\n' ' ')load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    seed=$(cut -d' ' -f1 "$WORK/seed.times" | median)
    rss=$(cut -d' ' -f2 "$WORK/seed.times" | sort -g | tail -1)
    grep_t=$(cut -d' ' -f1 "$WORK/grep.times" | median)
    jq_t=$(cut -d' ' -f1 "$WORK/jq.times" | median)
    seed_cpu=$(cut -d' ' -f3 "$WORK/seed.times" | median)
    grep_cpu=$(cut -d' ' -f3 "$WORK/grep.times" | median)
    jq_cpu=$(cut -d' ' -f3 "$WORK/jq.times" | median)
    awk -v src="$src" -v mb="$mbytes" -v n="$nfiles" -v p="$prompts" -v pr="$projects" -v s="$seed" -v g="$grep_t" -v j="$jq_t" -v r="$rss" \
        -v sc="$seed_cpu" -v gc="$grep_cpu" -v jc="$jq_cpu" 'BEGIN {
        s = (s > 0) ? s : 0.01; g = (g > 0) ? g : 0.01
        printf "| %s | %d MB | %d | %d in %d projects | %.2f s | %.0f | %.2f s | %.2f | %.2f s | %.1f | %.0f MB | %.2f / %.2f / %.2f |\n",
            src, mb, n, p, pr, s, mb / s, g, s / g, j, j / s, r / 1024, sc, gc, jc
    }'
    last_store[$src]=$store
done

# Incremental runs, on each source's last store: its full import recorded
# every file's stamp, so a run with nothing new only stats the files.
# Each round runs hist-seed with nothing new, find, then hist-seed after
# one prompt is appended: the three alternate, so a drift of the
# machine's speed weighs on all three alike.
echo
echo "| source | files | nothing new: hist-seed (median of $INC_RUNS) | find -printf '%s %T@' | x find | peak RSS | one prompt appended: hist-seed | minus nothing new (median of the rounds) |"
echo "|---|---|---|---|---|---|---|---|"
for src in "${SOURCES[@]}"; do
    setup "$src"
    store=${last_store[$src]}
    nfiles=${gen_files[$src]}
    run_seed() {
        timed "$1" env -i HOME="$WORK/home" PATH="$PATH" GENTLE_PI_HISTORY_CAPTURE=1 "${envs[@]}" \
            "$WORK/bin/hist-seed" --all-projects --from "$src" -q --store "$store"
    }
    : >"$WORK/none.times"
    : >"$WORK/find.times"
    : >"$WORK/append.times"
    # One prompt appended to one transcript: a copy of its last prompt
    # record with a fresh tag and fresh ids; for cursor and opencode, a
    # typed prompt written as the agent does, to one chat's store, to the
    # first session of the database.
    case $src in
    cursor) file=$(find "$data/chats" -name store.db | sort | sed -n 1p) ;;
    opencode) file=$data/opencode/opencode.db ;;
    *) file=$({ grep -rlE '\[(pi|cc|cx)[0-9]' "$data" || true; } | head -1) ;;
    esac
    # The appended prompts' ids are new in every run of this script (a
    # corpus read again with DATA keeps those of earlier runs).
    run_tag=$(printf %04x $((RANDOM)))
    for i in $(seq "$INC_RUNS"); do
        run_seed "$WORK/none.times"
        timed "$WORK/find.times" find "$data" -type f -printf '%s %T@\n'
        before=$(find "$store/projects" -type f -name '*.jsonl' -print0 | xargs -0 cat | wc -l)
        # Its times are those of a prompt typed 20 s before the run (older
        # than the 10 s a run leaves to live captures): a prompt keeping
        # the fixture's time would have the run read, for a live copy,
        # every store file of its project written since then.
        typed=$(($(date +%s) - 20))
        case $src in
        cursor | opencode)
            "$WORK/bin/genseed" -src "$src" -append "$file" -text "[appended $run_tag $i] one prompt more" -ms "${typed}000"
            ;;
        *)
            { grep -F "$pattern" "$file" | grep -E '\[(pi|cc|cx)[0-9]' || true; } | tail -1 |
                TYPED=$typed perl -MPOSIX=strftime -pe '
                    my $t = $ENV{TYPED};
                    my $iso = strftime("%Y-%m-%dT%H:%M:%S", gmtime $t) . ".000Z";
                    s/"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})"/"$iso"/g;
                    my $keys = "timestamp|completed_at|completed_at_ms|create_time|sentAtMs|startTime|started_at|started_at_ms";
                    s/("(?:$keys)":)[0-9]{13}\b/$1${t}000/g;
                    s/("(?:$keys)":)[0-9]{10}\b/$1$t/g;
                    s/\[(pi|cc|cx)[0-9]+/[${1}appended'"$i"'-/g;
                    s/\b[0-9a-f]{8}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/'"$run_tag$(printf %04x "$i")"'$1/g' >>"$file"
            ;;
        esac
        run_seed "$WORK/append.times"
        after=$(find "$store/projects" -type f -name '*.jsonl' -print0 | xargs -0 cat | wc -l)
        [ "$after" -eq $((before + 1)) ] || echo "bench-seed: $src: the appended prompt made $((after - before)) records, want 1" >&2
    done
    echo "bench-seed: $src: nothing-new runs (s): $(cut -d' ' -f1 "$WORK/none.times" | tr '\n' ' ')find runs (s): $(cut -d' ' -f1 "$WORK/find.times" | tr '\n' ' ')append runs (s): $(cut -d' ' -f1 "$WORK/append.times" | tr '\n' ' ')load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    none=$(cut -d' ' -f1 "$WORK/none.times" | median)
    rss=$(cut -d' ' -f2 "$WORK/none.times" | sort -g | tail -1)
    find_t=$(cut -d' ' -f1 "$WORK/find.times" | median)
    app=$(cut -d' ' -f1 "$WORK/append.times" | median)
    # The cost of the appended prompt: the median of each round's
    # difference (the two runs of a round are seconds apart).
    diff=$(paste -d' ' "$WORK/append.times" "$WORK/none.times" | awk '{print $1 - $4}' | median)
    awk -v src="$src" -v n="$nfiles" -v s="$none" -v f="$find_t" -v r="$rss" -v a="$app" -v d="$diff" 'BEGIN {
        f = (f > 0) ? f : 0.005
        printf "| %s | %d | %.3f s | %.3f s | %.2f | %.0f MB | %.3f s | %+.0f ms |\n", src, n, s, f, s / f, r / 1024, a, d * 1000
    }'
done

# The watch's latency, on each source's last store, with no hook wired:
# hist-seed --watch --all-projects runs; a prompt is appended to a
# transcript of a project of its own, and hist-list --project is run every
# 20 ms until it shows the prompt. WATCH_PROMPTS prompts, a second apart.
WATCH_PROMPTS=${WATCH_PROMPTS:-50}
[ "$WATCH_PROMPTS" -gt 0 ] || exit 0
echo
echo "| source | files | watch latency, write to hist-list (median of $WATCH_PROMPTS) | max |"
echo "|---|---|---|---|"
mkdir -p "$WORK/watchproj"
tag=$(printf %04x $((RANDOM)))
uuid="0000$tag-0000-7000-8000-$(printf %012x $((RANDOM)))"
# write_prompt SOURCE I: writes watch prompt I to $transcript.
write_prompt() {
    local ms iso text="[watch $tag $2]"
    ms=$(date +%s%3N)
    iso=$(date -u -d "@${ms:0:10}.${ms:10}" +%Y-%m-%dT%H:%M:%S.%3NZ)
    case $1 in
    pi) printf '{"type":"message","id":"w%s","parentId":null,"timestamp":"%s","message":{"role":"user","content":"%s","timestamp":%s}}\n' "$2" "$iso" "$text" "$ms" >>"$transcript" ;;
    claude) printf '{"type":"user","uuid":"%s-w%s","sessionId":"%s","cwd":"%s","timestamp":"%s","message":{"role":"user","content":"%s"}}\n' "$uuid" "$2" "$uuid" "$WORK/watchproj" "$iso" "$text" >>"$transcript" ;;
    codex) printf '{"timestamp":"%s","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","id":"w%s","content":[{"type":"text","text":"%s"}]}}}\n' "$iso" "$2" "$text" >>"$transcript" ;;
    cursor | opencode) "$WORK/bin/genseed" -src "$1" -append "$transcript" -text "$text" -ms "$ms" -cwd "$WORK/watchproj" ;;
    esac
}
for src in "${SOURCES[@]}"; do
    setup "$src"
    store=${last_store[$src]}
    iso=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
    case $src in
    pi)
        transcript="$data/sessions/--watch--/$(date -u +%Y-%m-%dT%H-%M-%S-000Z)_$uuid.jsonl"
        head='{"type":"session","version":3,"id":"'$uuid'","timestamp":"'$iso'","cwd":"'$WORK/watchproj'"}' ;;
    claude)
        transcript="$data/projects/-watch/$uuid.jsonl"
        head='' ;;
    codex)
        transcript="$data/sessions/2026/12/01/rollout-2026-12-01T00-00-00-$uuid.jsonl"
        head='{"timestamp":"'$iso'","type":"session_meta","payload":{"id":"'$uuid'","timestamp":"'$iso'","cwd":"'$WORK/watchproj'","originator":"bench","cli_version":"0.171.0","source":"cli"}}' ;;
    cursor) # a chat of its own (genseed makes its store)
        transcript="$data/chats/$(printf %s "$WORK/watchproj" | md5sum | cut -c1-32)/$uuid/store.db"
        head='' ;;
    opencode) # a session of its own in the database
        transcript="$data/opencode/opencode.db"
        head='' ;;
    esac
    mkdir -p "$(dirname "$transcript")"
    [ -z "$head" ] || echo "$head" >"$transcript"
    env -i HOME="$WORK/home" PATH="$PATH" GENTLE_PI_HISTORY_CAPTURE=1 "${envs[@]}" \
        "$WORK/bin/hist-seed" --watch --all-projects --from "$src" -q --store "$store" 2>"$WORK/watch.err" &
    watcher=$!
    sleep 5 # its first import, over every transcript
    : >"$WORK/watch.times"
    for i in $(seq "$WATCH_PROMPTS"); do
        write_prompt "$src" "$i"
        t0=${EPOCHREALTIME/./}
        until env -i HOME="$WORK/home" GENTLE_PI_HISTORY_CAPTURE=1 "$WORK/bin/hist-list" --store "$store" --project "$WORK/watchproj" 2>/dev/null |
            grep -qF "[watch $tag $i]"; do
            if [ $((${EPOCHREALTIME/./} - t0)) -gt 60000000 ]; then
                echo "bench-seed: $src: watch prompt $i not listed after 60 s:" >&2
                cat "$WORK/watch.err" >&2
                kill "$watcher"
                exit 1
            fi
            sleep 0.02
        done
        t1=${EPOCHREALTIME/./}
        echo "$(((t1 - t0) / 1000))" >>"$WORK/watch.times"
        sleep 1
    done
    kill "$watcher"
    wait "$watcher" || true
    echo "bench-seed: $src: watch latencies (ms): $(tr '\n' ' ' <"$WORK/watch.times")" >&2
    med=$(median <"$WORK/watch.times")
    worst=$(sort -g "$WORK/watch.times" | tail -1)
    awk -v src="$src" -v n="${gen_files[$src]}" -v m="$med" -v w="$worst" 'BEGIN {
        printf "| %s | %d | %.2f s | %.2f s |\n", src, n, m / 1000, w / 1000
    }'
done
