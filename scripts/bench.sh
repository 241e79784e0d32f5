#!/usr/bin/env bash
# bench.sh: runs every scripts/bench-*.sh; each writes its latest run to
# bench/<name>.md (bench-seed.sh prints its table, and bench/seed.md is
# written from it by hand). BENCHMARKS.md is kept by hand from these.
#
# Usage: scripts/bench.sh [NAME...]   run only scripts/bench-NAME.sh
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

[ ${#failed[@]} -eq 0 ] || { echo "bench: failed: ${failed[*]}" >&2; exit 1; }
