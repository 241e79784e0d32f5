#!/bin/sh
# Cursor's beforeSubmitPrompt hook for hist: capture the prompt (the payload
# on stdin: prompt, workspace_roots, conversation_id), then let it through.
# hist-capture --hook prints nothing and exits 0 even on its own errors
# (they go to stderr), so the prompt is never blocked or changed.
# The folder of the hist binaries: hist-capture --install writes its own
# folder into the next line, so that the hook runs whatever Cursor's PATH;
# a copy made by hand leaves it empty (the binaries are looked for on
# PATH). $HIST_BIN_DIR, when set, comes first.
dir=${HIST_BIN_DIR:-}
"${dir:+$dir/}hist-capture" --hook
printf '{"continue":true}\n'
