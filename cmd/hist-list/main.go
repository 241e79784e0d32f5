// Command hist-list prints the visible prompts of a scope, newest first.
package main

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"hist/lib/cli"
	"hist/lib/history"
	"hist/lib/lineenc"
	"hist/lib/lock"
	"hist/lib/store"
	"hist/lib/termsafe"
)

const usage = `Usage:
    hist-list [--project [DIR] | --all] [-0 | --json] [--limit N] [--store DIR]

Prints the visible prompts of a scope, newest first, each prompt once: its
newest copy's text and time, with the cwd, file, src and session of its
richest copy (a project and a session beat a project only, which beats
neither). Prompts hidden by a deletion record in hidden.json are never
printed.

Scopes:
    --project [DIR]  The project at DIR (default: the working directory): its
                     capture, seed and compact files, and the carry and claim
                     files that rewrites leave beside them. The default scope.
                     Write --project=DIR when a prompt could be taken for DIR.
                     A DIR that no longer exists still names its stored
                     prompts (with a warning); one the store never held is
                     an error.
    --all            Every project, plus history-global.jsonl and its carry files.

Formats:
    (default)        One prompt a line; "\" is written "\\", a newline "\n" and a NUL "\0",
                     so every prompt is one line and the encoding is reversible.
    -0               The raw prompt, each ended by a NUL byte. A prompt that
                     holds a NUL itself (stored by older builds; new records
                     keep U+FFFD instead) is not printed: stderr counts them
                     and the exit status is 1. List those with --json or the
                     default format, where a NUL is written "\0".
    --json           One JSON object a line: text, ts, cwd (the project folder,
                     from registry.json; "" when unknown), file, and src and
                     session where the prompt has them (imports, hook
                     captures).
    --limit N        Print at most N prompts (the newest N).

hist-delete --stdin reads each of these formats back, so a filtered listing
piped to it deletes exactly what was listed.

With capture off, hist-list reads nothing: it prints one warning naming the
control that decides and exits 0 with no output.

Exit status:
    0  listed (possibly nothing)
    1  some store files could not be read (the others were listed; stderr names
       them), or -0 left out prompts that hold a NUL byte
    2  usage error, a --project DIR that does not exist (and is not in the
       store), or HOME unset or not absolute while the store needs it
    3  hidden.json cannot be trusted: nothing is printed; restore the file or
       delete it yourself (hidden prompts may then reappear)

Malformed store lines are skipped; their count is reported on stderr.
On a terminal, control characters in prompts show as control pictures (␛ for
ESC) so a stored prompt cannot drive the terminal; a pipe gets the raw bytes.

Examples:
    $ hist-list | head
    $ hist-list --all | grep -i migration
    $ hist-list --all --json --limit 5 | jq -r .cwd
    $ hist-list --all | grep -F 'AKIA' | hist-delete --all --stdin
`

func main() { os.Exit(run(cli.OSEnv("hist-list"))) }

func run(e *cli.Env) int {
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	var scope cli.ScopeFlags
	scope.Register(fs)
	nul := fs.Bool("0", false, "")
	asJSON := fs.Bool("json", false, "")
	limit := fs.Int("limit", 0, "")
	args, code, stop := e.ParseArgs(fs, usage, cli.SplitOptional(e.Args, "project", 0))
	if stop {
		return code
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
	sc, _, ok := e.Scope(&scope, st)
	if !ok {
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
		lock.WaitFree(st.Lock(), deadline)
		var err error
		if files, err = st.Files(sc); err != nil {
			e.Errorf("listing the store %s: %v: nothing was printed", st.Root, err)
			return cli.ExitFailure
		}
		if try == 0 {
			limitMemory(files)
		}
		ids := store.IDs(files)
		res = history.Read(files, hidden)
		if try == 20 || time.Now().After(deadline) || !lock.Held(st.Lock()) && !st.Moved(sc, files, ids, history.Vanished(res.Failed)) {
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
	var withNUL atomic.Int64
	encode := func(buf []byte, i int) []byte {
		en := res.At(i)
		switch {
		case *nul:
			// A NUL inside the prompt would end its record early: the
			// parts would read as other prompts.
			if strings.IndexByte(en.Text, 0) >= 0 {
				withNUL.Add(1)
				return buf
			}
			buf = append(buf, en.Text...)
			return append(buf, 0)
		case *asJSON:
			return lineenc.AppendJSON(buf, lineenc.Listed{Text: en.Text, TS: en.TS, Cwd: reg[en.Project], File: en.File, Src: en.Src, Session: en.Session})
		}
		buf = lineenc.Append(buf, en.Text)
		return append(buf, '\n')
	}
	// On a terminal, control characters in prompts show escaped; a pipe
	// gets the raw bytes.
	if err := writeAll(termsafe.Writer(e.Stdout), n, encode); err != nil {
		return cli.ExitFailure // stdout closed (e.g. | head): nothing more to say
	}
	if res.Stats.Malformed > 0 {
		e.Warnf("skipped %s", cli.Plural(res.Stats.Malformed, "malformed store line", "malformed store lines"))
	}
	for _, f := range res.Failed {
		e.Errorf("could not read %v: its prompts are not listed", f)
	}
	if n := int(withNUL.Load()); n > 0 {
		e.Errorf("-0 left out %s holding a NUL byte, which would end its record early: list them with --json, or without -0 (a NUL is written \\0)", cli.Plural(n, "prompt", "prompts"))
		return cli.ExitFailure
	}
	if len(res.Failed) > 0 {
		return cli.ExitFailure
	}
	return cli.ExitOK
}

// settleWait bounds how long hist-list waits for rewrites that run while
// it reads.
const settleWait = 3 * time.Second

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
