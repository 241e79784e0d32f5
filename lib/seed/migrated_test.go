package seed

import (
	"path/filepath"
	"testing"
	"time"

	"hist/lib/store"
	"hist/lib/store/storetest"
)

// A FIFO where the migration record belongs is refused at once, not
// waited on.
func TestMigratedFIFO(t *testing.T) {
	st := store.Store{Root: t.TempDir(), Machine: "m1"}
	if err := storetest.Mkfifo(MigratedPath(st)); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := LoadMigrated(st); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("a FIFO at %s was read as a migration record", filepath.Base(MigratedPath(st)))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("LoadMigrated blocked on a FIFO for 5 s")
	}
}
