#!/usr/bin/env bash
# The main job on a fresh machine: install the binaries, turn capture on,
# wire hist into every agent found (hist-capture --install: the hooks run
# hist-capture by its absolute path, whatever the agent's PATH), import every
# project's past prompts from every agent found, and open the selector over
# all projects. The chosen prompt is printed on stdout. When the binaries'
# folder is not on your shell's PATH, it ends by printing the line to add to
# your shell's rc file, for the commands you type.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "hist: building the binaries (the first build takes a few minutes: it compiles SQLite and fzf)..." >&2
go install ./cmd/...
bin="$(go env GOBIN)"
[ -n "$bin" ] || bin="$(go env GOPATH)/bin"
export PATH="$bin:$PATH"
echo "hist: installed in $bin" >&2
hist-capture --enable
# A settings file that is not valid JSON leaves that agent unwired (said
# above); the rest still runs.
hist-capture --install || echo "hist: hist-capture --install exited $?: see above; fix it, then run hist-capture --install again (hist-capture --status checks it)" >&2
# A source that cannot be read now is retried by the next run; it does not
# stop the selector from opening.
hist-seed --all-projects || echo "hist: hist-seed exited $?: see above; run it again later" >&2
status=0
hist-pick --all || status=$?

# on_path reports whether folder $1 is on the PATH of a new terminal: the
# user's shell started with a clean environment as a terminal starts it
# (interactive: ~/.bashrc, ~/.zshrc, config.fish) or as a login starts it
# (~/.profile and the like); sh's login PATH when that shell cannot be run.
on_path() {
	local sh="${SHELL:-/bin/sh}" path="" flags
	[ -x "$sh" ] || sh=/bin/sh
	for flags in -ic -lc; do
		path=$(env -i HOME="$HOME" USER="${USER:-}" TERM=dumb timeout 10 "$sh" "$flags" 'printf "\n__hist_path__=%s\n" "$PATH"' </dev/null 2>/dev/null |
			sed -n 's/^__hist_path__=//p' | tail -n 1) || path=""
		case ":$path:" in *":$1:"* | *":$1/:"*) return 0 ;; esac
	done
	return 1
}

if ! on_path "$bin"; then
	dir="$bin"
	case "$bin" in "$HOME"/*) dir="\$HOME/${bin#"$HOME"/}" ;; esac
	case "$(basename "${SHELL:-sh}")" in
	bash) rc="~/.bashrc" line="export PATH=\"$dir:\$PATH\"" ;;
	zsh) rc="~/.zshrc" line="export PATH=\"$dir:\$PATH\"" ;;
	fish) rc="~/.config/fish/config.fish" line="fish_add_path \"$dir\"" ;;
	*) rc="~/.profile" line="export PATH=\"$dir:\$PATH\"" ;;
	esac
	{
		echo "hist: $bin is not on your shell's PATH. The agents' hooks run hist-capture by its full path and need nothing;"
		echo "hist: for the commands you type (hist-pick, hist-list...), add this line to $rc, then open a new terminal:"
		echo "    $line"
	} >&2
fi
exit "$status"
