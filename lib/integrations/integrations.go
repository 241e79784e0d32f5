// Package integrations holds the files that hist-capture --install copies
// into an agent's folder, embedded in the binary: pi's extension,
// opencode's plugin and Cursor's hook script. They are the canonical
// copies; scripts/pi/hist.ts, scripts/opencode/hist.js and
// scripts/cursor/hooks/hist-capture.sh are the same bytes, for installing
// by hand (docs/integrations.md), and a test fails when the two differ.
package integrations

import _ "embed"

// PiExtension is pi's extension, installed as extensions/hist.ts.
//
//go:embed hist.ts
var PiExtension []byte

// OpencodePlugin is opencode's plugin, installed as plugin/hist.js.
//
//go:embed hist.js
var OpencodePlugin []byte

// CursorHook is Cursor's beforeSubmitPrompt hook script, installed as
// hooks/hist-capture.sh.
//
//go:embed hist-capture.sh
var CursorHook []byte
