#!/bin/sh
# Cursor's beforeSubmitPrompt hook for hist: capture the prompt (the payload
# on stdin: prompt, workspace_roots, conversation_id), then let it through.
# hist-capture --hook prints nothing and exits 0 even on its own errors
# (they go to stderr), so the prompt is never blocked or changed.
"${HIST_BIN_DIR:+$HIST_BIN_DIR/}hist-capture" --hook
printf '{"continue":true}\n'
