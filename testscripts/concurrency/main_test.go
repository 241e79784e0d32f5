// Package concurrency holds Go tests that drive the real hist binaries at once
// (kept apart from the txtar scripts so that each package stays well within
// go test's time limit).
package concurrency

import (
	"testing"

	"hist/internal/testbin"
)

// BinDir is where TestMain built the binaries.
var BinDir string

func TestMain(m *testing.M) { testbin.Main(m, &BinDir) }

// TestSourcesTracked makes go test's cached result of this package depend
// on the sources of the binaries it runs (testbin.Track).
func TestSourcesTracked(t *testing.T) { testbin.Track(t) }
