// Package scripts embeds the integration files kept in this folder, which
// hist-capture --install copies into an agent's folder: pi's extension
// (pi/hist.ts), opencode's plugin (opencode/hist.js) and Cursor's hook
// script (cursor/hooks/hist-capture.sh). They are the same files the
// documentation tells people to copy by hand (docs/integrations.md): one
// copy of each. Each has one line that names the folder of the hist
// binaries, empty here; install writes its own folder into it.
package scripts

import _ "embed"

// PiExtension is pi's extension, installed as extensions/hist.ts.
//
//go:embed pi/hist.ts
var PiExtension []byte

// OpencodePlugin is opencode's plugin, installed as plugin/hist.js.
//
//go:embed opencode/hist.js
var OpencodePlugin []byte

// CursorHook is Cursor's beforeSubmitPrompt hook script, installed as
// hooks/hist-capture.sh.
//
//go:embed cursor/hooks/hist-capture.sh
var CursorHook []byte
