package atomicfile

import (
	"errors"
	"hist/lib/store/storetest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteBytes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := WriteBytes(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(data) != "two" || fi.Mode().Perm() != FilePerm {
		t.Errorf("content %q mode %v", data, fi.Mode())
	}
	if e := entries(t, dir); len(e) != 1 {
		t.Errorf("left behind: %v", e)
	}
}

func TestWriteFileFailureKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	os.WriteFile(p, []byte("original"), 0o600)
	boom := errors.New("boom")
	err := WriteFile(p, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if err != boom {
		t.Fatalf("err = %v", err)
	}
	data, _ := os.ReadFile(p)
	if string(data) != "original" {
		t.Errorf("target changed: %q", data)
	}
	if e := entries(t, dir); len(e) != 1 {
		t.Errorf("temp file left: %v", e)
	}
}

func TestCommitFailureRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	// Renaming over a non-empty folder fails.
	target := filepath.Join(dir, "busy")
	os.MkdirAll(filepath.Join(target, "x"), 0o700)
	p, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	p.Write([]byte("data"))
	if err := p.Commit(); err == nil {
		t.Fatal("commit over a non-empty folder succeeded")
	}
	if e := entries(t, dir); len(e) != 1 || e[0] != "busy" {
		t.Errorf("left behind: %v", e)
	}
	if err := p.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
	p.Cleanup() // safe after a failed commit
}

func TestCreateNames(t *testing.T) {
	dir := t.TempDir()
	p, err := Create(filepath.Join(dir, "hidden.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	name := filepath.Base(p.Name())
	if !strings.HasPrefix(name, ".hidden.json.tmp-"+strconv.Itoa(os.Getpid())+"-") || !IsTemp(name) {
		t.Errorf("temp name %q", name)
	}
	if Stale(name) {
		t.Error("our own temp file is stale")
	}
	fi, _ := p.Stat()
	if fi.Mode().Perm() != FilePerm {
		t.Errorf("temp mode %v", fi.Mode())
	}
	p.Cleanup()
	if e := entries(t, dir); len(e) != 0 {
		t.Errorf("Cleanup left %v", e)
	}
}

func TestStale(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	dead := cmd.Process.Pid // reaped: gone
	if !Stale(".x.jsonl.tmp-" + strconv.Itoa(dead) + "-abcd") {
		t.Errorf("a dead pid's temp file is not stale")
	}
	if Stale(".x.jsonl.tmp-1-abcd") { // init is alive
		t.Errorf("pid 1's temp file is stale")
	}
	for _, n := range []string{"x.jsonl", ".x.jsonl.tmp-abc-1", ".x.tmp-", "x.tmp-999999-1", ".x.tmp-0-a", ".x.tmp--5-a"} {
		if Stale(n) {
			t.Errorf("Stale(%q)", n)
		}
	}
	if IsTemp("x.jsonl") || IsTemp(".x.jsonl") || !IsTemp(".x.jsonl.tmp-1-a") {
		t.Error("IsTemp")
	}
}

func TestRandHex(t *testing.T) {
	a, b := RandHex(4), RandHex(4)
	if len(a) != 8 || a == b {
		t.Errorf("RandHex = %q, %q", a, b)
	}
}

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("data"), 0o600)
	if data, err := ReadRegular(p); err != nil || string(data) != "data" {
		t.Errorf("ReadRegular = %q, %v", data, err)
	}
	if _, err := ReadRegular(dir); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("a folder: %v", err)
	}
	if _, err := ReadRegular(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if storetest.Mkfifo(fifo) == nil {
		if _, err := ReadRegular(fifo); !errors.Is(err, ErrNotRegular) {
			t.Errorf("a FIFO: %v", err)
		}
	}
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Error(err)
	}
	if err := SyncDir(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("SyncDir of a missing folder")
	}
}
