#!/usr/bin/env bash
# The main job on a fresh machine: install the binaries, turn capture on,
# capture a prompt and list it.
set -euo pipefail
cd "$(dirname "$0")/.."
go install ./cmd/...
bin="$(go env GOPATH)/bin"
export PATH="$bin:$PATH"
hist-capture --enable
hist-capture "my first prompt, captured by hist"
hist-list --limit 10
echo "hist is installed in $bin; add it to your PATH." >&2
