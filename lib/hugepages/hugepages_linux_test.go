package hugepages

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// vma is a mapping of /proc/self/smaps: its range and whether it is marked
// for huge pages ("hg" in VmFlags).
type vma struct {
	lo, hi uintptr
	hg     bool
}

func mappings(t *testing.T) []vma {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var vs []vma
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && len(vs) > 0 {
			vs[len(vs)-1].hg = strings.Contains(" "+rest+" ", " hg ")
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasSuffix(f[0], ":") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		l, err1 := strconv.ParseUint(lo, 16, 64)
		h, err2 := strconv.ParseUint(hi, 16, 64)
		if ok && err1 == nil && err2 == nil {
			vs = append(vs, vma{uintptr(l), uintptr(h), false})
		}
	}
	return vs
}

// TestForHeap checks that the heap allocated after ForHeap lies in memory
// marked for huge pages, where the kernel gives them on request.
func TestForHeap(t *testing.T) {
	if !onRequest() {
		t.Skipf("%s does not say [madvise]", modeFile)
	}
	ForHeap(64 << 20)
	marked := uintptr(0)
	for _, v := range mappings(t) {
		if v.hg {
			marked += v.hi - v.lo
		}
	}
	if marked < 60<<20 {
		t.Fatalf("%d MB marked for huge pages, want about 64", marked>>20)
	}
	b := make([]byte, 8<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	// Every page of b lies in marked memory.
	lo := uintptr(unsafe.Pointer(&b[0]))
	hi := lo + uintptr(len(b))
	vs := mappings(t)
	for p := lo; p < hi; p += 4096 {
		in := false
		for _, v := range vs {
			if v.lo <= p && p < v.hi {
				in = v.hg
				break
			}
		}
		if !in {
			t.Fatalf("a new 8 MB slice at %#x-%#x: %#x is not in memory marked for huge pages", lo, hi, p)
		}
	}
}

// TestRoomFor: a limit on the address space turns ForHeap off.
func TestRoomFor(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &old); err != nil {
		t.Skip(err)
	}
	if !roomFor(64 << 20) {
		t.Skipf("this process already has an address space limit (%d)", old.Cur)
	}
	lim := old
	lim.Cur = 64 << 30
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		t.Skip(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_AS, &old)
	if roomFor(64 << 20) {
		t.Error("roomFor says yes under a 64 GB address space limit")
	}
}

// TestModeFile: only "[madvise]" turns ForHeap on.
func TestModeFile(t *testing.T) {
	defer func(p string) { modeFile = p }(modeFile)
	dir := t.TempDir()
	for text, want := range map[string]bool{
		"always [madvise] never\n": true,
		"[always] madvise never\n": false,
		"always madvise [never]\n": false,
	} {
		modeFile = dir + "/enabled"
		os.WriteFile(modeFile, []byte(text), 0o600)
		if got := onRequest(); got != want {
			t.Errorf("%q: onRequest %v, want %v", text, got, want)
		}
	}
	modeFile = dir + "/missing"
	if onRequest() {
		t.Error("a missing mode file: onRequest says yes")
	}
}
