# benchlib.sh: what the store benchmarks (bench-list.sh, bench-pick.sh)
# share. Sourced, not run.

# median: the median of the numbers on stdin, rounded; spread: their
# min-max, rounded.
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f", m}'; }
spread() { sort -n | awk '{a[NR]=$1} END {printf "%.0f-%.0f", a[1], a[NR]}'; }

# genstore_once GENSTORE DIR MIX N: a store of N prompts of MIX at DIR,
# generated (deterministically) unless an earlier run left it there.
genstore_once() {
    if [ ! -d "$2/projects" ]; then
        echo "generating $2" >&2
        rm -rf "$2"
        "$1" -out "$2" -n "$4" -mix "$3" >/dev/null
    fi
}
