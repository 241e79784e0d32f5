#!/usr/bin/env bash
# End to end with the real agents: Claude Code, Codex and opencode, installed
# from npm, run offline against a mock model on 127.0.0.1 with hist's hook or
# plugin installed in a temporary HOME. Checks that the hooks captured exactly
# the typed prompts, and that hist-seed, run afterwards over the transcripts
# the agents wrote, finds the same prompts, with no duplicate in hist-list.
#
# It is not part of `go test ./...` (it downloads about 1.2 GB); run it by hand:
#
#     scripts/e2e-agents.sh                  # everything in a temp folder, removed at the end
#     scripts/e2e-agents.sh --cache ~/.cache/hist-e2e   # keep the installs for the next run
#
# Options:
#     --cache DIR   install Node 22 and the agents into DIR (reused when there) and keep them
#     --only LIST   comma-separated subset of claude,codex,opencode
#     --keep        keep the work folder (HOME, store, logs) and print its path
#
# Exit status: 0 every check passed; 1 a check failed; 2 usage; 3 no check
# failed but some were skipped (e.g. this hist-seed has no reader for an
# agent yet); 4 npm could not install something (offline?).
set -uo pipefail

NODE_VERSION=22.23.5
CLAUDE_PKG=@anthropic-ai/claude-code@2.1.332
CODEX_PKG=@openai/codex@0.171.0
OPENCODE_PKG=opencode-ai@1.18.33

usage() { sed -n '2,/^set -uo/p' "$0" | sed -e '/^set -uo/d' -e 's/^# \{0,1\}//'; }

CACHE="" KEEP=0 ONLY="claude,codex,opencode"
while [ $# -gt 0 ]; do
	case $1 in
	--cache) CACHE=${2:?--cache needs a folder}; shift 2 ;;
	--cache=*) CACHE=${1#--cache=}; shift ;;
	--only) ONLY=${2:?--only needs a list}; shift 2 ;;
	--only=*) ONLY=${1#--only=}; shift ;;
	--keep) KEEP=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "e2e-agents: unknown argument '$1': see --help" >&2; exit 2 ;;
	esac
done
for a in ${ONLY//,/ }; do
	case $a in claude | codex | opencode) ;; *) echo "e2e-agents: unknown agent '$a' in --only: use claude, codex, opencode" >&2; exit 2 ;; esac
done
want() { [[ ",$ONLY," == *",$1,"* ]]; }
for tool in go npm jq sha256sum timeout; do
	command -v "$tool" >/dev/null || { echo "e2e-agents: $tool is not installed: it is needed to run this script" >&2; exit 2; }
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hist-e2e-agents.XXXXXX")
AGENTS=${CACHE:-$WORK/agents}
mkdir -p "$AGENTS" "$WORK/tmp"
MOCK_PID=""

cleanup() {
	[ -n "$MOCK_PID" ] && kill "$MOCK_PID" 2>/dev/null
	# A Codex TUI leaves an app-server daemon; end it by its pid files.
	for f in "$WORK"/home/.codex/app-server-daemon/*.pid; do
		[ -f "$f" ] || continue
		pid=$(jq -r '.pid // empty' "$f" 2>/dev/null) && [ -n "$pid" ] && kill "$pid" 2>/dev/null
	done
	if [ "$KEEP" = 1 ]; then
		echo "e2e-agents: kept $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

say() { printf '%s\n' "$*"; }
PASS=0 FAIL=0 SKIP=0
pass() { PASS=$((PASS + 1)); say "PASS  $*"; }
fail() { FAIL=$((FAIL + 1)); say "FAIL  $*"; }
skip() { SKIP=$((SKIP + 1)); say "SKIP  $*"; }

# --- Node 22 and the agents --------------------------------------------------
export npm_config_cache="$AGENTS/npm-cache" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
npm_install() { # DIR SPEC ARGS...: install into DIR via DIR.tmp, so a broken install is never reused
	local dir=$1 spec=$2 t0
	shift 2
	rm -rf "$dir.tmp"
	t0=$(date +%s)
	if ! npm install "$@" --prefix "$dir.tmp" "$spec" >"$WORK/npm.log" 2>&1; then
		echo "e2e-agents: npm install $spec failed (is the npm registry reachable?):" >&2
		tail -5 "$WORK/npm.log" >&2
		exit 4
	fi
	mv "$dir.tmp" "$dir"
	say "installed $spec in $(($(date +%s) - t0))s"
}

NODE_BIN=""
node_major_minor=$(node --version 2>/dev/null | sed -n 's/^v\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
if ! { read -r maj min <<<"$node_major_minor" && [ "${maj:-0}" -gt 22 -o \( "${maj:-0}" -eq 22 -a "${min:-0}" -ge 19 \) ]; }; then
	case $(uname -m) in x86_64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) echo "e2e-agents: no Node 22 package for $(uname -m)" >&2; exit 2 ;; esac
	[ -d "$AGENTS/node-$NODE_VERSION" ] || npm_install "$AGENTS/node-$NODE_VERSION" "node-linux-$arch@$NODE_VERSION" --no-save
	NODE_BIN="$AGENTS/node-$NODE_VERSION/node_modules/node-linux-$arch/bin"
	export PATH="$NODE_BIN:$PATH"
fi
say "node $(node --version)"

declare -A PKG=([claude]=$CLAUDE_PKG [codex]=$CODEX_PKG [opencode]=$OPENCODE_PKG)
AGENT_PATH=""
for a in claude codex opencode; do
	want "$a" || continue
	dir="$AGENTS/$a-${PKG[$a]##*@}"
	[ -x "$dir/bin/$a" ] || npm_install "$dir" "${PKG[$a]}" -g
	if [ "$a" = claude ] && ! "$dir/bin/claude" --version >/dev/null 2>&1; then
		# The package's postinstall fetches nothing; npm may have skipped it.
		(cd "$dir/lib/node_modules/@anthropic-ai/claude-code" && node install.cjs >/dev/null 2>&1)
	fi
	say "$a $("$dir/bin/$a" --version 2>&1 | head -1)"
	AGENT_PATH="$AGENT_PATH:$dir/bin"
done
AGENT_PATH=${AGENT_PATH#:}

# --- hist, the mock model, the temporary HOME ---------------------------------
BIN="$WORK/bin"
(cd "$ROOT" && go build -o "$BIN/" ./cmd/... ./scripts/mockmodel/cmd/mockmodel) || { echo "e2e-agents: building hist failed" >&2; exit 1; }
"$BIN/mockmodel" --port-file "$WORK/port" --log "$WORK/mock.log" >/dev/null 2>"$WORK/mock.err" &
MOCK_PID=$!
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port" 2>/dev/null) || { echo "e2e-agents: the mock model did not start: $(cat "$WORK/mock.err")" >&2; exit 1; }
say "mock model on http://127.0.0.1:$PORT"

H="$WORK/home"
STORE="$H/.pi/agent/history"
mkdir -p "$H/.claude/commands" "$H/.codex/prompts" "$H/.config/opencode/plugin" "$H/.config/opencode/command"
# Only what we set: no CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_* or proxy from the caller.
ENV=(env -i "HOME=$H" "PATH=${NODE_BIN:+$NODE_BIN:}$AGENT_PATH:$BIN:/usr/local/bin:/usr/bin:/bin"
	"LANG=C.UTF-8" "TERM=dumb" "TMPDIR=$WORK/tmp")
"${ENV[@]}" hist-capture --enable >/dev/null 2>&1 || { echo "e2e-agents: hist-capture --enable failed" >&2; exit 1; }

# The prompts each agent gets: a new session, a multi-line one, a continued
# one, then a command or template (the last is never captured as typed).
prompts_for() { # TAG -> sets A B C
	A="[$1-1] fix the flaky test in store_test.go"
	B=$(printf '[%s-2] a prompt on three lines:\n    an indented line with "quotes" and a tab\there\nthe last line ' "$1")
	C="[$1-3] and now the benchmarks, in the same session"
}
TEMPLATE='Please greet $ARGUMENTS warmly, in one sentence.'
EXPANDED='Please greet Ada Lovelace warmly, in one sentence.'

# json_lines TEXT...: each text as one JSON string a line (exact comparison).
json_lines() { for s in "$@"; do jq -cn --arg s "$s" '$s'; done; }

# project_dir CWD: the store folder of a project, from registry.json.
project_dir() {
	local h
	h=$(jq -r --arg d "$1" 'to_entries[] | select(.value == $d) | .key' "$STORE/registry.json" 2>/dev/null | head -1)
	[ -n "$h" ] && printf '%s/projects/%s\n' "$STORE" "$h"
}

# captured DIR: the texts in the project's capture files (not seed or
# compact files), oldest first, one JSON string a line.
captured() {
	local f
	for f in "$1"/*.jsonl; do
		[ -f "$f" ] || continue
		case ${f##*/} in seed.jsonl | seed-* | compact-*) continue ;; esac
		cat "$f"
	done | jq -sc 'sort_by(.ts)[] | .text'
}

run_agent() { # NAME CMD...: run one agent command in the project, output kept in the log
	local name=$1
	shift
	if ! (cd "$PROJ" && timeout 300 "${ENV[@]}" "$@") >>"$WORK/$name.out" 2>>"$WORK/$name.err" </dev/null; then
		fail "$name: '$*' failed: $(tail -3 "$WORK/$name.err" | tr '\n' ' ')"
		return 1
	fi
}
run_agent_stdin() { # NAME TEXT CMD...: the prompt on stdin
	local name=$1 text=$2
	shift 2
	if ! (cd "$PROJ" && printf '%s' "$text" | timeout 300 "${ENV[@]}" "$@") >>"$WORK/$name.out" 2>>"$WORK/$name.err"; then
		fail "$name: '$*' (prompt on stdin) failed: $(tail -3 "$WORK/$name.err" | tr '\n' ' ')"
		return 1
	fi
}

declare -A PROJECT EXPECT SRC
# --- Claude Code -------------------------------------------------------------
if want claude; then
	PROJ="$WORK/projects/claude proj ü"
	mkdir -p "$PROJ"
	PROJECT[claude]=$PROJ SRC[claude]=claude
	cp "$ROOT/scripts/claude/settings.json" "$H/.claude/settings.json"
	printf -- '---\ndescription: Greet someone\n---\n%s\n' "$TEMPLATE" >"$H/.claude/commands/greet.md"
	prompts_for cc
	CL=(env "ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=dummy CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
		DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 claude -p)
	run_agent claude "${CL[@]}" "$A" &&
		run_agent claude "${CL[@]}" --continue "$B" &&
		run_agent claude "${CL[@]}" --continue "$C" &&
		run_agent claude "${CL[@]}" --continue "/greet Ada Lovelace"
	EXPECT[claude]=$(json_lines "$A" "$B" "$C")
fi

# --- Codex --------------------------------------------------------------------
if want codex; then
	PROJ="$WORK/projects/codex proj ü"
	mkdir -p "$PROJ"
	PROJECT[codex]=$PROJ SRC[codex]=codex
	cat >"$H/.codex/config.toml" <<-EOF
		model = "mock-model"
		model_provider = "mock"
		approval_policy = "never"
		sandbox_mode = "read-only"
		check_for_update_on_startup = false

		[model_providers.mock]
		name = "mock"
		base_url = "http://127.0.0.1:$PORT/v1"
		wire_api = "responses"
		env_key = "MOCK_API_KEY"
	EOF
	cp "$ROOT/scripts/codex/hooks.json" "$H/.codex/hooks.json"
	printf -- '---\ndescription: Greet someone\n---\n%s\n' "$TEMPLATE" >"$H/.codex/prompts/greet.md"
	prompts_for cx
	# A user trusts the hook once in the TUI ("Hooks need review"); a script
	# that ships its own hooks.json skips that review for its own runs.
	CX=(env MOCK_API_KEY=dummy codex exec --dangerously-bypass-hook-trust --skip-git-repo-check)
	run_agent codex "${CX[@]}" "$A" &&
		run_agent codex "${CX[@]}" resume --last "$B" &&
		run_agent codex "${CX[@]}" resume --last "$C" &&
		run_agent codex "${CX[@]}" resume --last "/prompts:greet Ada Lovelace"
	EXPECT[codex]=$(json_lines "$A" "$B" "$C")
fi

# --- opencode -------------------------------------------------------------------
if want opencode; then
	PROJ="$WORK/projects/opencode proj ü"
	mkdir -p "$PROJ"
	PROJECT[opencode]=$PROJ SRC[opencode]=opencode
	jq -n --arg url "http://127.0.0.1:$PORT/v1" '{
		"$schema": "https://opencode.ai/config.json",
		provider: {mock: {npm: "@ai-sdk/openai-compatible", name: "mock",
			options: {baseURL: $url, apiKey: "dummy"}, models: {"mock-model": {name: "mock-model"}}}},
		model: "mock/mock-model", small_model: "mock/mock-model", autoupdate: false, share: "disabled"}' \
		>"$H/.config/opencode/opencode.json"
	cp "$ROOT/scripts/opencode/hist.js" "$H/.config/opencode/plugin/hist.js"
	printf -- '---\ndescription: Greet someone\n---\n%s\n' "$TEMPLATE" >"$H/.config/opencode/command/greet.md"
	prompts_for oc
	OC=(env OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_SHARE=1 opencode run)
	# `opencode run "a b"` stores the argument re-quoted ("\"a b\""); on stdin
	# the prompt arrives as typed. A command reaches the model (and is stored)
	# only expanded, so its expansion is what the plugin captures.
	run_agent_stdin opencode "$A" "${OC[@]}" &&
		run_agent_stdin opencode "$B" "${OC[@]}" --continue &&
		run_agent_stdin opencode "$C" "${OC[@]}" --continue &&
		run_agent opencode "${OC[@]}" --continue --command greet Ada Lovelace
	EXPECT[opencode]=$(json_lines "$A" "$B" "$C" "$EXPANDED")
fi

# --- Checks -------------------------------------------------------------------------
say ""
say "== hooks: what was captured while the agents ran"
declare -A DIR HOOKED
for a in claude codex opencode; do
	want "$a" || continue
	n=$(grep -c 'OK, noted.' "$WORK/$a.out" 2>/dev/null)
	[ "${n:-0}" -ge 4 ] || fail "$a: the agent printed the mock's reply $n times, not 4 (see $a.err)"
	d=$(project_dir "${PROJECT[$a]}")
	if [ -z "$d" ]; then
		fail "$a: nothing captured: no project in $STORE/registry.json for '${PROJECT[$a]}'"
		continue
	fi
	DIR[$a]=$d
	HOOKED[$a]=$(captured "$d")
	if [ "${HOOKED[$a]}" = "${EXPECT[$a]}" ]; then
		pass "$a: the hook captured exactly the $(printf '%s\n' "${EXPECT[$a]}" | wc -l) expected prompts, in order"
	elif [ "$a" = opencode ] && [ "$(printf '%s\n' "${HOOKED[$a]}" | jq -r 'ascii_downcase | gsub("\\s+"; " ") | ltrimstr(" ") | rtrimstr(" ")')" = \
		"$(printf '%s\n' "${EXPECT[$a]}" | jq -r 'ascii_downcase | gsub("\\s+"; " ") | ltrimstr(" ") | rtrimstr(" ")')" ]; then
		pass "$a: the plugin captured the typed prompts and the expanded command (same identity as expected)"
	else
		fail "$a: the hook captured"
		printf '%s\n' "${HOOKED[$a]}" | sed 's/^/        /'
		say "      want"
		printf '%s\n' "${EXPECT[$a]}" | sed 's/^/        /'
	fi
	srcs=$(cat "$d"/*.jsonl 2>/dev/null | jq -r '.src // ""' | sort -u | tr '\n' ' ')
	if [ "$srcs" = "${SRC[$a]} " ]; then
		pass "$a: captured records carry src '${SRC[$a]}' ($(ls "$d" | grep -vc '^seed') capture file(s))"
	else
		fail "$a: captured records carry src '$srcs', want '${SRC[$a]}'"
	fi
	# Every captured record names the agent's session (what the selector resumes).
	nosession=$(cat "$d"/[!s]*.jsonl 2>/dev/null | jq -r 'select((.session // "") == "") | .text' | wc -l)
	if [ "$nosession" = 0 ]; then
		pass "$a: captured records carry the agent's session id ($(cat "$d"/[!s]*.jsonl | jq -r .session | sort -u | tr '\n' ' '))"
	else
		fail "$a: $nosession captured record(s) carry no session id"
	fi
done

say ""
say "== hist-seed over the transcripts the agents wrote"
FROM=$(for a in claude codex opencode; do want "$a" && printf '%s,' "$a"; done)
# Into the store the hooks wrote: every prompt was captured live, so
# nothing is imported a second time.
"${ENV[@]}" hist-seed --all-projects --from "${FROM%,}" >"$WORK/seed.out" 2>"$WORK/seed.err"
seed_rc=$?
sed 's/^/    /' "$WORK/seed.err"
say "    (exit $seed_rc)"
if grep -q ' written to ' "$WORK/seed.err"; then
	fail "hist-seed imported prompts the hooks had captured live"
else
	pass "hist-seed imported nothing the hooks had captured live"
fi
# Into a store of its own: the readers find what the hooks captured.
SEEDSTORE="$WORK/seed-store"
"${ENV[@]}" hist-seed --store "$SEEDSTORE" --all-projects --from "${FROM%,}" >"$WORK/seed2.out" 2>"$WORK/seed2.err"
sed 's/^/    /' "$WORK/seed2.err"
for a in claude codex opencode; do
	want "$a" || continue
	[ -n "${DIR[$a]:-}" ] || continue
	f="$SEEDSTORE/projects/$(basename "${DIR[$a]}")/seed-$a.jsonl"
	if [ ! -f "$f" ]; then
		if grep -q "$a: .*no reader" "$WORK/seed.err"; then
			skip "$a: this hist-seed has no reader for $a yet: the seed half was not checked"
		else
			fail "$a: hist-seed wrote no $f"
		fi
		continue
	fi
	seeded=$(jq -c '.text' "$f" | sort)
	hooked=$(printf '%s\n' "${HOOKED[$a]}" | sort)
	if [ "$seeded" = "$hooked" ]; then
		pass "$a: seed-$a.jsonl holds the same $(printf '%s\n' "$seeded" | grep -c .) prompts the hook captured"
	else
		fail "$a: seed-$a.jsonl and the hook differ (< seed, > hook):"
		diff <(printf '%s\n' "$seeded") <(printf '%s\n' "$hooked") | grep '^[<>]' | sed 's/^/        /'
	fi
	if jq -e --arg a "$a" 'select(.src != $a or (.session // "") == "")' "$f" >/dev/null; then
		fail "$a: some seed records lack src '$a' or a session id"
	fi
done

say ""
say "== hist-list: every prompt once"
for a in claude codex opencode; do
	want "$a" || continue
	[ -n "${DIR[$a]:-}" ] || continue
	listed=$("${ENV[@]}" hist-list --project="${PROJECT[$a]}" --json | jq -c '.text')
	dups=$(printf '%s\n' "$listed" | sort | uniq -d)
	want_n=$(printf '%s\n' "${HOOKED[$a]}" | sort -u | grep -c .)
	got_n=$(printf '%s\n' "$listed" | grep -c .)
	if [ -n "$dups" ]; then
		fail "$a: hist-list shows duplicates: $dups"
	elif [ "$got_n" != "$want_n" ]; then
		fail "$a: hist-list shows $got_n prompts, want $want_n"
	else
		pass "$a: hist-list shows $got_n prompts, none twice"
	fi
	printf '%s\n' "$listed" | sed 's/^/        /'
done

say ""
say "mock model: $(wc -l <"$WORK/mock.log") requests"
say "result: $PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" -gt 0 ] && exit 1
[ "$SKIP" -gt 0 ] && exit 3
exit 0
