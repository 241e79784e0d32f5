#!/usr/bin/env bash
# The main job on a fresh machine: install the binaries, turn capture on,
# wire hist into every agent found (hist-capture --install), import every
# project's past prompts from every agent found, and open the selector over
# all projects. The chosen prompt is printed on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "hist: building the binaries (the first build takes a few minutes: it compiles SQLite and fzf)..." >&2
go install ./cmd/...
bin="$(go env GOPATH)/bin"
export PATH="$bin:$PATH"
echo "hist: installed in $bin (add it to your PATH)" >&2
hist-capture --enable
# A settings file that is not valid JSON leaves that agent unwired (said
# above); the rest still runs.
hist-capture --install || echo "hist: hist-capture --install exited $?: see above; fix it, then run hist-capture --install again" >&2
# A source that cannot be read now is retried by the next run; it does not
# stop the selector from opening.
hist-seed --all-projects || echo "hist: hist-seed exited $?: see above; run it again later" >&2
exec hist-pick --all
