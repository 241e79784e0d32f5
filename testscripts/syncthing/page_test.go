//go:build linux

package syncthing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"hist/internal/testbin"
	"hist/lib/store"
)

// TestPageSetup follows docs/sync.md as a user does, on two fresh
// machines, and runs two real Syncthing processes with the settings the
// page gives them.
//
// The marking convention: a fenced block whose previous non-blank line is
// "<!-- sync-test: setup -->" or "<!-- sync-test: check -->" is run as it
// stands, in a bash that stays open for the whole test on each machine
// (the page asks for one terminal a machine), with set -e and stdin from
// /dev/null. Setup blocks run in page order, each on both machines before
// the next; the only change made to a block is OTHER-ID, replaced by the
// other machine's device id, which is read from what the blocks before it
// printed. The check blocks run after the test has captured on both
// machines, deleted on one, and waited for the two to agree.
//
// The machines: each one is a network namespace of its own (ip netns),
// with its own host name (unshare --uts), loopback and one end of a veth
// pair (10.77.0.1/24 and 10.77.0.2/24), so that both Syncthing processes
// use the page's defaults (GUI 127.0.0.1:8384, sync port 22000) and find
// each other by local discovery (UDP broadcasts on port 21027) over the
// veth link, as two machines on one network do (Linux only). The shell's
// environment holds no XDG_RUNTIME_DIR or D-Bus address, so systemctl
// --user fails and the page's start block takes its by-hand branch: the
// test never enables a service on the host.
func TestPageSetup(t *testing.T) {
	if BinDir == "" {
		t.Skip("the binaries were not built")
	}
	for _, tool := range []string{"syncthing", "ip", "unshare", "curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH, which this test needs: %v", tool, err)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("the two machines are network namespaces, which only root can make")
	}
	begin := time.Now()
	setup, check := readPage(t, filepath.Join(testbin.Root(), "docs", "sync.md"))
	base := t.TempDir()
	nsA, nsB := twoNamespaces(t)
	a := newMachine(t, base, "alpha", nsA)
	b := newMachine(t, base, "beta", nsB)
	both := []*machine{a, b}
	a.other, b.other = b, a

	for _, blk := range setup {
		for _, m := range both {
			m.runBlock(blk)
		}
	}
	for _, m := range both {
		m.checkModes("after the setup blocks")
	}
	t.Logf("setup blocks done on both machines in %.1f s", time.Since(begin).Seconds())

	s := &pageScene{t: t, machines: both, want: map[string]bool{}}
	for _, m := range both {
		m.must("hist-capture --enable >/dev/null 2>&1")
		m.api()
		m.checkFolder()
	}
	rounds := testbin.Scale(1, 3)
	for r := range rounds {
		s.round(r)
	}

	// The page's own check, then hist-compact --check by itself, so that
	// its exit status is tested whatever the check block holds.
	for _, blk := range check {
		for _, m := range both {
			out := m.runBlock(blk)
			for _, want := range []string{`(?m)^machine:\s+` + m.name + `\b`, `(?m)^capture:\s+on\b`, `healthy: no problem found`, `"completion":\s*100\b`} {
				if !regexp.MustCompile(want).MatchString(out) {
					t.Errorf("%s: the check block at docs/sync.md:%d printed nothing that matches %s:\n%s", m.name, blk.line, want, out)
				}
			}
		}
	}
	for _, m := range both {
		if out, code := m.do("the test's command", "hist-compact --check", false); code != 0 {
			t.Errorf("%s: hist-compact --check exited %d:\n%s", m.name, code, out)
		}
		m.checkModes("at the end")
	}
	t.Logf("%d rounds, %d prompts listed on both machines; %.1f s", rounds, len(s.want), time.Since(begin).Seconds())
}

// pageBlock is one marked block of the page.
type pageBlock struct {
	line int    // the line of its opening fence
	kind string // setup or check
	text string
}

var pageMark = regexp.MustCompile(`^\s*<!--\s*sync-test:\s*(\S+)\s*-->\s*$`)

// readPage returns the page's marked blocks, setup and check.
func readPage(t *testing.T, path string) (setup, check []pageBlock) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		m := pageMark.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if m[1] != "setup" && m[1] != "check" {
			t.Fatalf("docs/sync.md:%d: %q: a sync-test mark is setup or check", i+1, lines[i])
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			t.Fatalf("docs/sync.md:%d: the sync-test mark is not followed by a fenced block", i+1)
		}
		indent := lines[j][:len(lines[j])-len(strings.TrimLeft(lines[j], " "))]
		var body []string
		k := j + 1
		for ; k < len(lines) && strings.TrimSpace(lines[k]) != "```"; k++ {
			body = append(body, strings.TrimPrefix(lines[k], indent))
		}
		if k == len(lines) {
			t.Fatalf("docs/sync.md:%d: the block never ends", j+1)
		}
		blk := pageBlock{line: j + 1, kind: m[1], text: strings.Join(body, "\n") + "\n"}
		if blk.kind == "setup" {
			setup = append(setup, blk)
		} else {
			check = append(check, blk)
		}
		i = k
	}
	if len(setup) == 0 || len(check) == 0 {
		t.Fatalf("docs/sync.md has %d setup and %d check blocks marked <!-- sync-test: ... -->: it needs both", len(setup), len(check))
	}
	return setup, check
}

// twoNamespaces makes two network namespaces joined by a veth pair, each
// end with an address on one subnet, and removes them when the test ends.
func twoNamespaces(t *testing.T) (string, string) {
	t.Helper()
	id := strconv.Itoa(os.Getpid())
	nsA, nsB := "histpage-"+id+"-a", "histpage-"+id+"-b"
	vA, vB := "hp"+id+"a", "hp"+id+"b"
	if out, err := exec.Command("ip", "netns", "add", nsA).CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace here (ip netns add): %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { dropNamespace(t, nsA) })
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
	}
	ip("netns", "add", nsB)
	t.Cleanup(func() { dropNamespace(t, nsB) })
	ip("link", "add", vA, "type", "veth", "peer", "name", vB)
	ip("link", "set", vA, "netns", nsA)
	ip("link", "set", vB, "netns", nsB)
	for _, x := range [][3]string{{nsA, vA, "10.77.0.1/24"}, {nsB, vB, "10.77.0.2/24"}} {
		ip("-n", x[0], "addr", "add", x[2], "dev", x[1])
		ip("-n", x[0], "link", "set", "lo", "up")
		ip("-n", x[0], "link", "set", x[1], "up")
	}
	return nsA, nsB
}

// dropNamespace ends the processes the test started in the namespace
// (the machine's shell, Syncthing), by their ids, then removes it and its
// end of the veth pair.
func dropNamespace(t *testing.T, ns string) {
	deadline := time.Now().Add(10 * time.Second)
	for sig := syscall.SIGTERM; ; {
		out, _ := exec.Command("ip", "netns", "pids", ns).Output()
		pids := strings.Fields(string(out))
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			if sig == syscall.SIGKILL {
				t.Errorf("processes %v still run in %s", pids, ns)
				break
			}
			sig, deadline = syscall.SIGKILL, time.Now().Add(5*time.Second)
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil {
				syscall.Kill(pid, sig)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
		t.Errorf("ip netns del %s: %v: %s", ns, err, bytes.TrimSpace(out))
	}
}

// machine is one machine: a bash that stays open in its namespace, with a
// fresh HOME, the binaries on PATH and nothing else from the test's
// environment.
type machine struct {
	t          *testing.T
	name, ns   string
	home, dir  string // dir: the test's files about the machine, outside HOME
	other      *machine
	id         string // the Syncthing device id its blocks printed
	key, addr  string // Syncthing's API key and GUI address
	stdin      io.WriteCloser
	mu         sync.Mutex
	out        bytes.Buffer // everything the shell printed
	exited     chan struct{}
	drained    chan struct{} // closed when nothing holds the output pipe
	exitStatus string
	n          int // commands sent
}

func newMachine(t *testing.T, base, name, ns string) *machine {
	t.Helper()
	m := &machine{t: t, name: name, ns: ns, dir: filepath.Join(base, name), exited: make(chan struct{}), drained: make(chan struct{})}
	m.home = filepath.Join(m.dir, "home")
	if err := os.MkdirAll(m.home, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", ns, "unshare", "--uts", "--",
		"sh", "-c", `hostname "$1" && exec bash --norc --noprofile`, "sh", name)
	cmd.Dir = m.home
	cmd.Env = []string{"HOME=" + m.home, "PATH=" + BinDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"USER=root", "LOGNAME=root", "SHELL=/bin/bash", "LANG=C.UTF-8", "TERM=dumb"}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if m.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			m.mu.Lock()
			m.out.Write(buf[:n])
			m.mu.Unlock()
			if err != nil {
				r.Close()
				close(m.drained)
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		m.mu.Lock()
		m.exitStatus = fmt.Sprint(err)
		if err == nil {
			m.exitStatus = "exit status 0"
		}
		m.mu.Unlock()
		close(m.exited)
	}()
	t.Cleanup(m.stop)
	return m
}

// stop asks Syncthing to shut down and ends the shell; dropNamespace ends
// whatever is left. On failure it shows the end of Syncthing's log.
func (m *machine) stop() {
	select {
	case <-m.exited:
	default:
		m.send("syncthing cli operations shutdown >/dev/null 2>&1\nexit 0\n")
		m.stdin.Close()
		select {
		case <-m.exited:
		case <-time.After(10 * time.Second):
		}
	}
	if m.t.Failed() {
		log := filepath.Join(m.home, ".local", "state", "syncthing.log")
		m.t.Logf("%s: the end of %s:\n%s", m.name, log, tail(log, 20))
	}
}

func (m *machine) send(s string) {
	if _, err := io.WriteString(m.stdin, s); err != nil {
		m.t.Errorf("%s: writing to the shell: %v", m.name, err)
	}
}

// do runs script in the machine's shell (set -e when strict: the first
// command that fails ends the shell, and the test) and returns what it
// printed and its exit status; what names it in failures. A script that
// does not finish within a minute fails the test.
func (m *machine) do(what, script string, strict bool) (string, int) {
	t := m.t
	t.Helper()
	m.n++
	path := filepath.Join(m.dir, fmt.Sprintf("step-%02d.sh", m.n))
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("__page_test_done_%d", m.n)
	m.mu.Lock()
	from := m.out.Len()
	m.mu.Unlock()
	set := "set +e"
	if strict {
		set = "set -e"
	}
	m.send(fmt.Sprintf("%s\n. '%s' </dev/null\n__status=$?; set +e; printf '\\n%s %%d\\n' \"$__status\"\n", set, path, mark))
	done := regexp.MustCompile(`\n` + mark + ` (\d+)\n`)
	deadline := time.Now().Add(time.Minute)
	for {
		m.mu.Lock()
		out := m.out.String()[from:]
		m.mu.Unlock()
		if x := done.FindStringSubmatchIndex(out); x != nil {
			code, _ := strconv.Atoi(out[x[2]:x[3]])
			return out[:x[0]], code
		}
		select {
		case <-m.exited:
			select { // the output's last bytes (a process left running may hold the pipe)
			case <-m.drained:
			case <-time.After(time.Second):
			}
			m.mu.Lock()
			out, status := m.out.String()[from:], m.exitStatus
			m.mu.Unlock()
			t.Fatalf("%s: the shell stopped (%s) while running %s:\n%s\nit printed:\n%s", m.name, status, what, indent(script), indent(out))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s still runs after a minute:\n%s\nit printed so far:\n%s", m.name, what, indent(script), indent(out))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// must runs the test's own command, which must exit 0.
func (m *machine) must(script string) string {
	m.t.Helper()
	out, code := m.do("the test's command", script, false)
	if code != 0 {
		m.t.Fatalf("%s: %s: exit status %d:\n%s", m.name, script, code, indent(out))
	}
	return out
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// deviceID is the shape of a Syncthing device id.
var deviceID = regexp.MustCompile(`\b[A-Z2-7]{7}(?:-[A-Z2-7]{7}){7}\b`)

// runBlock runs one of the page's blocks, with OTHER-ID replaced by the
// other machine's device id, and learns this machine's id from what it
// prints.
func (m *machine) runBlock(blk pageBlock) string {
	t := m.t
	t.Helper()
	text := blk.text
	if strings.Contains(text, "OTHER-ID") {
		if m.other.id == "" {
			t.Fatalf("docs/sync.md:%d uses OTHER-ID, but no block before it printed %s's device id", blk.line, m.other.name)
		}
		text = strings.ReplaceAll(text, "OTHER-ID", m.other.id)
	}
	out, _ := m.do(fmt.Sprintf("the %s block at docs/sync.md:%d", blk.kind, blk.line), text, true)
	for _, id := range deviceID.FindAllString(out, -1) {
		if m.id != "" && id != m.id && id != m.other.id {
			t.Fatalf("%s: docs/sync.md:%d printed two device ids of this machine, %s and %s", m.name, blk.line, m.id, id)
		}
		if id != m.other.id {
			m.id = id
		}
	}
	t.Logf("%s: docs/sync.md:%d (%s) printed:\n%s", m.name, blk.line, blk.kind, indent(out))
	return out
}

// checkModes says whether every folder of the store is 0700 and every
// file 0600, Syncthing's own files aside.
func (m *machine) checkModes(when string) {
	root := filepath.Join(m.home, ".pi", "agent", "history")
	var bad []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != root && store.IsSyncthing(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			bad = append(bad, fmt.Sprintf("%s is %04o, not %04o", path, info.Mode().Perm(), want))
		}
		return nil
	})
	if err != nil {
		m.t.Errorf("%s: %s: %v", m.name, when, err)
	}
	if len(bad) > 0 {
		m.t.Errorf("%s: %s, the store is not private: %s", m.name, when, strings.Join(bad, "; "))
	}
}

// api reads Syncthing's API key and GUI address, as the page's check does.
func (m *machine) api() {
	out := m.must("syncthing cli config gui apikey get; syncthing cli config gui raw-address get")
	f := strings.Fields(out)
	if len(f) != 2 {
		m.t.Fatalf("%s: syncthing cli config gui apikey/raw-address get printed %q", m.name, out)
	}
	m.key, m.addr = f[0], f[1]
}

// checkFolder checks the folder the page set up: shared with the other
// machine, and keeping each file's mode (ignorePerms off), which the page
// says it does. A Syncthing started by hand from the page's terminal has
// its umask 077 and would make the files private anyway; the user service
// has umask 022.
func (m *machine) checkFolder() {
	out := m.must(fmt.Sprintf("curl -s -m 5 -H 'X-API-Key: %s' 'http://%s/rest/config/folders/hist'", m.key, m.addr))
	var f struct {
		Path        string
		IgnorePerms bool
		Devices     []struct{ DeviceID string }
	}
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		m.t.Fatalf("%s: Syncthing has no folder hist after the setup blocks: /rest/config/folders/hist answered %q", m.name, out)
	}
	var ids []string
	for _, d := range f.Devices {
		ids = append(ids, d.DeviceID)
	}
	if !slices.Contains(ids, m.other.id) {
		m.t.Fatalf("%s: after the setup blocks, Syncthing's folder hist is shared with %q, not with %s (%s)", m.name, ids, m.other.name, m.other.id)
	}
	if want := filepath.Join(m.home, ".pi", "agent", "history"); f.Path != want {
		m.t.Errorf("%s: Syncthing's folder hist is %s, not the store %s", m.name, f.Path, want)
	}
	if f.IgnorePerms {
		m.t.Errorf("%s: Syncthing's folder hist ignores permissions: a Syncthing with umask 022 (the user service) writes the other machine's files 0644 in 0755 folders", m.name)
	}
}

// syncState is what Syncthing says about the folder and the other machine.
type syncState struct {
	Connected      bool
	State          string
	NeedTotalItems int
	PullErrors     int
	Completion     float64
	err            string
}

func (s syncState) ok() bool {
	return s.err == "" && s.Connected && s.State == "idle" && s.NeedTotalItems == 0 && s.PullErrors == 0 && s.Completion == 100
}

func (s syncState) String() string {
	if s.err != "" {
		return s.err
	}
	return fmt.Sprintf("connected %v, folder %q, %d items needed, %d pull errors, completion %.0f",
		s.Connected, s.State, s.NeedTotalItems, s.PullErrors, s.Completion)
}

// syncthing asks Syncthing's REST API (curl, in the machine's namespace)
// about the folder hist and the connection to the other machine.
func (m *machine) syncthing() syncState {
	get := func(path string) string {
		return fmt.Sprintf("curl -s -m 5 -H 'X-API-Key: %s' 'http://%s%s'; echo\n", m.key, m.addr, path)
	}
	out, code := m.do("the test's command", get("/rest/system/connections")+get("/rest/db/status?folder=hist")+get("/rest/db/completion?folder=hist"), false)
	if code != 0 {
		return syncState{err: fmt.Sprintf("Syncthing's REST API: curl exit status %d: %s", code, strings.TrimSpace(out))}
	}
	var conns struct {
		Connections map[string]struct{ Connected bool }
	}
	var st syncState
	dec := json.NewDecoder(strings.NewReader(out))
	for _, v := range []any{&conns, &st, &st} {
		if err := dec.Decode(v); err != nil {
			return syncState{err: fmt.Sprintf("Syncthing's REST API answered %q: %v", strings.TrimSpace(out), err)}
		}
	}
	st.Connected = conns.Connections[m.other.id].Connected
	return st
}

// list is hist-list --all on the machine, sorted.
func (m *machine) list() []string {
	out, code := m.do("the test's command", "hist-list --all 2>&1", false)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if out == "" {
		lines = nil
	}
	if code != 0 {
		lines = append(lines, fmt.Sprintf("(hist-list exit status %d)", code))
	}
	sort.Strings(lines)
	return lines
}

// pageScene is what the machines must list once they agree.
type pageScene struct {
	t        *testing.T
	machines []*machine
	want     map[string]bool
}

// round captures two prompts on each machine, waits for both to list
// them, deletes one of each machine's on one machine (alpha, then beta,
// ...), and waits again. Before its delete, the deleting machine holds a
// temp file of the kind hist's rewrites make; after it, the other machine
// must have neither that file nor the rewriters' lock: the .stignore keeps
// them on their machine.
func (s *pageScene) round(r int) {
	t := s.t
	for _, m := range s.machines {
		for k := range 2 {
			text := fmt.Sprintf("%s round %d prompt %d: rename the parser flag and fix its test", m.name, r, k)
			// The second goes to a capture file whose name holds
			// ".tmp-", as an agent's instance id may: only hist's temp
			// files (".<name>.tmp-<pid>-<rand>") stay on their machine.
			instance := ""
			if k == 1 {
				instance = "--instance job.tmp-1 "
			}
			m.must("mkdir -p ~/src/app && cd ~/src/app && hist-capture " + instance + "'" + text + "'")
			s.want[text] = true
		}
	}
	s.converge(fmt.Sprintf("round %d captures", r))

	del, other := s.machines[r%2], s.machines[(r+1)%2]
	temp := fmt.Sprintf(".registry@%s.json.tmp-%d-0badf00d", del.name, os.Getpid())
	del.must(": >~/.pi/agent/history/" + temp)
	// The other machine may hold a lock (and temp files) of its own: what
	// counts is that its file is still its own (same inode, or none).
	before := map[string]os.FileInfo{}
	for _, name := range []string{store.LockName, temp} {
		before[name], _ = os.Lstat(filepath.Join(other.home, ".pi", "agent", "history", name))
	}
	for _, m := range s.machines {
		text := fmt.Sprintf("%s round %d prompt 0: rename the parser flag and fix its test", m.name, r)
		del.must("hist-delete --all '" + text + "' 2>&1")
		delete(s.want, text)
	}
	s.converge(fmt.Sprintf("round %d deletes on %s", r, del.name))
	for _, name := range []string{store.LockName, temp} {
		if _, err := os.Lstat(filepath.Join(del.home, ".pi", "agent", "history", name)); err != nil {
			t.Errorf("%s: %s: %v (the test expected it there)", del.name, name, err)
		}
		fi, err := os.Lstat(filepath.Join(other.home, ".pi", "agent", "history", name))
		if err == nil && (before[name] == nil || !os.SameFile(fi, before[name])) {
			t.Errorf("%s holds %s from %s: the page's .stignore does not keep it on its machine", other.name, name, del.name)
		}
	}
	del.must("rm ~/.pi/agent/history/" + temp)
}

// converge waits until both machines list exactly the prompts expected
// and each one's Syncthing is connected to the other, idle, and sure the
// other has all it has.
func (s *pageScene) converge(stage string) {
	t := s.t
	var want []string
	for text := range s.want {
		want = append(want, text)
	}
	sort.Strings(want)
	start := time.Now()
	deadline := start.Add(90 * time.Second)
	for {
		var why []string
		for _, m := range s.machines {
			got := m.list()
			st := m.syncthing()
			if !equal(got, want) || !st.ok() {
				why = append(why, fmt.Sprintf("%s lists %s; its Syncthing: %s", m.name, diff(got, want), st))
			}
		}
		if len(why) == 0 {
			t.Logf("%s: both machines agree after %.1f s", stage, time.Since(start).Seconds())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after 90 s, the machines still do not both list the %d prompts expected with Syncthing connected, idle and complete:\n%s",
				stage, len(want), indent(strings.Join(why, "\n")))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// diff says how a listing differs from the one expected.
func diff(got, want []string) string {
	in := map[string]bool{}
	for _, g := range got {
		in[g] = true
	}
	var missing []string
	for _, w := range want {
		if !in[w] {
			missing = append(missing, w)
		}
		delete(in, w)
	}
	var extra []string
	for g := range in {
		extra = append(extra, g)
	}
	sort.Strings(extra)
	if len(missing) == 0 && len(extra) == 0 {
		return fmt.Sprintf("the %d prompts expected", len(want))
	}
	return fmt.Sprintf("%d prompts, %d of %d expected missing %q, %d unexpected %q", len(got), len(missing), len(want), missing, len(extra), extra)
}
