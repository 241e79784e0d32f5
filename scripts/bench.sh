#!/usr/bin/env bash
# bench.sh: runs every scripts/bench-*.sh (each writes bench/<name>.md), then
# gathers bench/*.md under a short header into BENCHMARKS.md.
#
# Usage: scripts/bench.sh [NAME...]   run only scripts/bench-NAME.sh (the
#                                     report still gathers every bench/*.md)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

scripts=()
if [ $# -gt 0 ]; then
    for n in "$@"; do scripts+=("scripts/bench-$n.sh"); done
else
    for s in scripts/bench-*.sh; do scripts+=("$s"); done
fi
failed=()
for s in "${scripts[@]}"; do
    [ -f "$s" ] || { echo "bench: no $s" >&2; failed+=("$s"); continue; }
    name=$(basename "$s" .sh)
    name=${name#bench-}
    echo "bench: running $s" >&2
    if ! bash "$s" "bench/$name.md" >&2; then
        echo "bench: $s failed; bench/$name.md keeps its last results" >&2
        failed+=("$s")
    fi
done

{
    echo "# Benchmarks"
    echo
    echo "Measured, not asserted: \`scripts/bench.sh\` runs every \`scripts/bench-*.sh\`, each of which"
    echo "times the real binaries against a baseline in the same run and writes \`bench/<name>.md\`;"
    echo "this file gathers them. The numbers depend on the machine and on what else runs on it:"
    echo "each section says when and where it was measured."
    for md in bench/*.md; do
        [ -f "$md" ] || continue
        echo
        # Each report's headings go one level below this file's title.
        if grep -q '^# ' "$md"; then
            sed 's/^\(#\+\) /#\1 /' "$md"
        else
            cat "$md"
        fi
    done
} >BENCHMARKS.md
echo "bench: wrote BENCHMARKS.md" >&2
[ ${#failed[@]} -eq 0 ] || { echo "bench: failed: ${failed[*]}" >&2; exit 1; }
