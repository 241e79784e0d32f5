// Command hist-list prints the visible prompts of a scope, newest first.
package main

import (
	"bufio"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"hist/lib/cli"
	"hist/lib/history"
	"hist/lib/lineenc"
	"hist/lib/store"
)

const usage = `Usage:
    hist-list [--project [DIR] | --all] [-0 | --json] [--limit N] [--store DIR]

Prints the visible prompts of a scope, newest first, each prompt once (its
newest copy). Prompts hidden by a deletion record in hidden.json are never
printed.

Scopes:
    --project [DIR]  The project at DIR (default: the working directory): its
                     capture, seed and compact files, and the carry and claim
                     files that rewrites leave beside them. The default scope.
                     Write --project=DIR when a prompt could be taken for DIR.
    --all            Every project, plus history-global.jsonl and its carry files.

Formats:
    (default)        One prompt a line; "\" is written "\\" and a newline "\n",
                     so every prompt is one line and the encoding is reversible.
    -0               The raw prompt, each ended by a NUL byte.
    --json           One JSON object a line: text, ts, cwd (the project folder,
                     from registry.json; "" when unknown), file, and src and
                     session for imported prompts.
    --limit N        Print at most N prompts (the newest N).

hist-delete --stdin reads each of these formats back, so a filtered listing
piped to it deletes exactly what was listed.

With capture off, hist-list reads nothing: it prints one warning naming the
control that decides and exits 0 with no output.

Exit status:
    0  listed (possibly nothing)
    1  some store files could not be read (the others were listed; stderr names them)
    2  usage error
    3  hidden.json cannot be trusted: nothing is printed; restore the file or
       delete it yourself (hidden prompts may then reappear)

Malformed store lines are skipped; their count is reported on stderr.

Examples:
    $ hist-list | head
    $ hist-list --all | grep -i migration
    $ hist-list --all --json --limit 5 | jq -r .cwd
    $ hist-list --all | grep -F 'AKIA' | hist-delete --all --stdin
`

func main() { os.Exit(run(cli.OSEnv("hist-list"))) }

func run(e *cli.Env) int {
	fs := flag.NewFlagSet(e.Name, flag.ContinueOnError)
	storeDir := cli.StoreFlag(fs)
	var scope cli.ScopeFlags
	scope.Register(fs)
	nul := fs.Bool("0", false, "")
	asJSON := fs.Bool("json", false, "")
	limit := fs.Int("limit", 0, "")
	args, ok, help := e.Parse(fs, usage, cli.SplitOptional(e.Args, "project", 0))
	if help {
		return cli.ExitOK
	}
	if !ok {
		return cli.ExitUsage
	}
	if len(args) > 0 {
		e.Errorf("unexpected argument %q: hist-list takes only flags (to filter, pipe it to grep)", args[0])
		return cli.ExitUsage
	}
	if *nul && *asJSON {
		e.Errorf("-0 and --json are two formats: choose one")
		return cli.ExitUsage
	}
	if *limit < 0 {
		e.Errorf("--limit %d: give a positive number (0 means no limit)", *limit)
		return cli.ExitUsage
	}
	st := e.Store(*storeDir)
	sc, _, err := scope.Resolve(st)
	if err != nil {
		e.Errorf("%v", err)
		return cli.ExitUsage
	}

	pol := e.Policy()
	if !pol.On {
		e.Warnf("%s", pol.OffHint())
		return cli.ExitOK
	}
	hidden, ok := e.LoadHidden(st)
	if !ok {
		return cli.ExitUntrusted
	}
	// A delete or compaction running meanwhile may move prompts out of a
	// file before it is read (a capture file renamed to a claim, a claim
	// removed once its compact file is committed, lines that reached a
	// rewritten file's old inode put back after the rename): such a read
	// is done again, once the rewrite has ended (waiting at most
	// settleWait in all), so a visible prompt is never missing.
	deadline := time.Now().Add(settleWait)
	var files []store.File
	var res *history.Result
	for try := 0; ; try++ {
		waitRewrite(st.Lock(), deadline)
		var err error
		if files, err = st.Files(sc); err != nil {
			e.Errorf("listing the store %s: %v: nothing was printed", st.Root, err)
			return cli.ExitFailure
		}
		if try == 0 {
			limitMemory(files)
		}
		ids := fileIDs(files)
		res = history.Read(files, hidden)
		if try == 20 || time.Now().After(deadline) || !rewriting(st.Lock()) && !moved(st, sc, files, ids, res) {
			break
		}
	}

	n := res.Len()
	if *limit > 0 && *limit < n {
		n = *limit
	}
	var reg map[string]string
	if *asJSON {
		reg = st.LoadRegistry()
	}
	encode := func(buf []byte, i int) []byte {
		en := res.At(i)
		switch {
		case *nul:
			buf = append(buf, en.Text...)
			return append(buf, 0)
		case *asJSON:
			return lineenc.AppendJSON(buf, lineenc.Listed{Text: en.Text, TS: en.TS, Cwd: reg[en.Project], File: en.File, Src: en.Src, Session: en.Session})
		}
		buf = lineenc.Append(buf, en.Text)
		return append(buf, '\n')
	}
	if err := writeAll(e.Stdout, n, encode); err != nil {
		return cli.ExitFailure // stdout closed (e.g. | head): nothing more to say
	}
	if res.Stats.Malformed > 0 {
		e.Warnf("skipped %d malformed store line(s)", res.Stats.Malformed)
	}
	for _, f := range res.Failed {
		e.Errorf("could not read %v: its prompts are not listed", f)
	}
	if len(res.Failed) > 0 {
		return cli.ExitFailure
	}
	return cli.ExitOK
}

// settleWait bounds how long hist-list waits for rewrites that run while
// it reads.
const settleWait = 3 * time.Second

// rewriting says whether a rewriter (delete, compact, seed) holds the
// store's lock.
func rewriting(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// waitRewrite waits until no rewriter holds the store's lock, or deadline.
func waitRewrite(path string, deadline time.Time) {
	for rewriting(path) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

type fileID struct{ dev, ino uint64 }

// fileIDs are the files' device and inode numbers (zero when gone).
func fileIDs(files []store.File) []fileID {
	ids := make([]fileID, len(files))
	for i, f := range files {
		var st syscall.Stat_t
		if syscall.Stat(f.Path, &st) == nil {
			ids[i] = fileID{uint64(st.Dev), uint64(st.Ino)}
		}
	}
	return ids
}

// moved says whether a rewrite ran while res was read from files (whose
// ids were taken before the read): a file vanished or was replaced, or
// the store now holds a claim, carry or compact file that files did not
// list.
func moved(st store.Store, sc store.Scope, files []store.File, ids []fileID, res *history.Result) bool {
	for _, f := range res.Failed {
		if errors.Is(f.Err, os.ErrNotExist) {
			return true
		}
	}
	if !slices.Equal(ids, fileIDs(files)) {
		return true
	}
	now, err := st.Files(sc)
	if err != nil {
		return false
	}
	had := make(map[string]bool, len(files))
	for _, f := range files {
		had[f.Path] = true
	}
	for _, f := range now {
		if had[f.Path] {
			continue
		}
		switch store.Classify(filepath.Base(f.Path)) {
		case store.Claim, store.Carry, store.Compact:
			return true
		}
	}
	return false
}

// limitMemory bounds the heap to about 1.5 times the scope's size (at
// least 256 MiB) unless GOMEMLIMIT says otherwise: the reader keeps about
// the size of the unique prompts, and without a limit the collector lets
// the heap grow to twice that before it runs.
func limitMemory(files []store.File) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var total int64
	for _, f := range files {
		if fi, err := os.Lstat(f.Path); err == nil {
			total += fi.Size()
		}
	}
	debug.SetMemoryLimit(max(256<<20, total/2*3))
}

// chunk is how many entries writeAll encodes at a time.
const chunk = 4096

// writeAll writes the encodings of entries 0..n-1 to w, in order. A long
// listing is encoded on two goroutines, a chunk each in turn, the helper
// at most four chunks ahead of the writer.
func writeAll(w io.Writer, n int, encode func(buf []byte, i int) []byte) error {
	encodeChunk := func(buf []byte, k int) []byte {
		for i := k * chunk; i < min((k+1)*chunk, n); i++ {
			buf = encode(buf, i)
		}
		return buf
	}
	chunks := (n + chunk - 1) / chunk
	if chunks < 4 || runtime.GOMAXPROCS(0) < 2 {
		bw := bufio.NewWriterSize(w, 256<<10)
		var buf []byte
		for i := range n {
			buf = encode(buf[:0], i)
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
	done := make([]chan []byte, chunks)
	for k := range done {
		done[k] = make(chan []byte, 1)
	}
	free := make(chan []byte, 4) // the helper's buffers
	for range cap(free) {
		free <- nil
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for k := 1; k < chunks; k += 2 {
			select {
			case buf := <-free:
				done[k] <- encodeChunk(buf[:0], k)
			case <-stop:
				return
			}
		}
	}()
	var mine []byte
	for k := range chunks {
		var buf []byte
		if k%2 == 0 {
			mine = encodeChunk(mine[:0], k)
			buf = mine
		} else {
			buf = <-done[k]
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		if k%2 == 1 {
			free <- buf
		}
	}
	return nil
}
