// Package stress holds Go tests that drive the real hist binaries at once
// (kept apart from the txtar scripts so that each package stays well within
// go test's time limit).
package stress

import (
	"testing"

	"hist/internal/testbin"
)

// BinDir is the folder of the commands TestMain put on PATH.
var BinDir string

func TestMain(m *testing.M) { testbin.Main(m, &BinDir) }
