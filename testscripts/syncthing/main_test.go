// Package syncthing runs the real hist binaries on two "machines" (two
// HOMEs, two machine ids, two store folders) whose stores two real
// Syncthing peers on 127.0.0.1 keep in sync, the way docs/sync.md sets
// them up. It skips when syncthing is not on PATH.
package syncthing

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"hist/internal/testbin"
)

// BinDir is the folder of the commands TestMain put on PATH.
var BinDir string

func TestMain(m *testing.M) { testbin.Main(m, &BinDir) }

// folderID is the id of the shared store folder on both peers.
const folderID = "hist"

// stignore is the .stignore docs/sync.md gives: each machine's lock and
// hist's temp files stay local.
const stignore = "/.rewrite.lock\n/history-global.jsonl.migration-lock\n.*.tmp-*\n"

// peer is one machine: its hist HOME and store, and the Syncthing
// instance that shares the store.
type peer struct {
	t       *testing.T
	machine string // HIST_MACHINE
	home    string // hist's HOME
	store   string // the store, the shared folder
	proj    string // the project folder (the same path on both machines)
	env     []string

	stHome      string // Syncthing's config and database
	id          string // Syncthing device id
	apiKey      string
	gui, listen int
	cmd         *exec.Cmd
	logPath     string
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// newPeer makes the machine's folders, its .stignore and its Syncthing
// keys and default config (syncthing generate); start edits the config
// and runs it once both device ids are known.
func newPeer(t *testing.T, base, machine, proj string) *peer {
	t.Helper()
	p := &peer{
		t: t, machine: machine, proj: proj,
		home:   filepath.Join(base, machine, "home"),
		store:  filepath.Join(base, machine, "store"),
		stHome: filepath.Join(base, machine, "syncthing"),
		gui:    freePort(t), listen: freePort(t),
	}
	p.logPath = filepath.Join(base, machine, "syncthing.log")
	p.env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "GENTLE_PI_HISTORY_CAPTURE=1", "HIST_MACHINE=" + machine}
	for _, d := range []string{p.home, p.store, p.stHome} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(p.store, ".stignore"), []byte(stignore), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := p.syncthing("generate", "--home", p.stHome, "--no-default-folder"); err != nil {
		t.Fatalf("%s: syncthing generate: %v\n%s", machine, err, out)
	}
	out, err := p.syncthing("serve", "--home", p.stHome, "--device-id")
	if err != nil {
		t.Fatalf("%s: syncthing serve --device-id: %v\n%s", machine, err, out)
	}
	p.id = strings.TrimSpace(out)
	return p
}

func (p *peer) syncthing(args ...string) (string, error) {
	cmd := exec.Command("syncthing", args...)
	cmd.Env = p.stEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (p *peer) stEnv() []string {
	return []string{"HOME=" + p.stHome, "PATH=" + os.Getenv("PATH"), "STNOUPGRADE=1", "STNODEFAULTFOLDER=1"}
}

// configure edits the config.xml that syncthing generate wrote, so that
// every setting not named here keeps Syncthing's default: REST on p.gui,
// listening on p.listen only, no discovery, relays, NAT, usage or crash
// reports, upgrades or browser, reconnecting within a second of a resume,
// the other peer's device, and the store shared with it as a folder made
// from the config's folder defaults, rescanned every 3 s and watched with
// a 1 s delay.
func (p *peer) configure(other *peer) {
	t := p.t
	path := filepath.Join(p.stHome, "config.xml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(data)
	find := func(re string) []string {
		m := regexp.MustCompile(re).FindStringSubmatch(cfg)
		if m == nil {
			t.Fatalf("%s: %s has nothing that matches %s: this Syncthing writes another config", p.machine, path, re)
		}
		return m
	}
	set := func(re, repl string) {
		find(re)
		cfg = regexp.MustCompile(re).ReplaceAllString(cfg, repl)
	}
	p.apiKey = find(`<apikey>([^<]+)</apikey>`)[1]
	set(`(<gui[^>]*>\s*<address>)[^<]*`, "${1}127.0.0.1:"+strconv.Itoa(p.gui))
	set(`<listenAddress>[^<]*</listenAddress>`, "<listenAddress>tcp://127.0.0.1:"+strconv.Itoa(p.listen)+"</listenAddress>")
	for _, kv := range [][2]string{
		{"globalAnnounceEnabled", "false"}, {"localAnnounceEnabled", "false"}, {"relaysEnabled", "false"},
		{"natEnabled", "false"}, {"crashReportingEnabled", "false"}, {"startBrowser", "false"},
		{"urAccepted", "-1"}, {"autoUpgradeIntervalH", "0"}, {"reconnectionIntervalS", "1"},
	} {
		set(`<`+kv[0]+`>[^<]*</`+kv[0]+`>`, "<"+kv[0]+">"+kv[1]+"</"+kv[0]+">")
	}
	folder := find(`(?s)<defaults>\s*(<folder .*?</folder>)`)[1]
	var esc strings.Builder
	xml.EscapeText(&esc, []byte(p.store))
	for _, r := range [][2]string{
		{`id="" label="" path="~"`, `id="` + folderID + `" label="hist store" path="` + esc.String() + `"`},
		{`rescanIntervalS="3600"`, `rescanIntervalS="3"`},
		{`fsWatcherDelayS="10"`, `fsWatcherDelayS="1"`},
		{`<minDiskFree unit="%">1</minDiskFree>`, `<minDiskFree unit="%">0</minDiskFree>`},
		{`<device id="` + p.id + `" introducedBy="">`, `<device id="` + other.id + `" introducedBy=""></device>` + "\n" + `<device id="` + p.id + `" introducedBy="">`},
	} {
		if !strings.Contains(folder, r[0]) {
			t.Fatalf("%s: the folder defaults in %s have no %s: this Syncthing writes another config", p.machine, path, r[0])
		}
		folder = strings.Replace(folder, r[0], r[1], 1)
	}
	// One peer dials, the other only accepts ("dynamic", with discovery
	// off): two peers dialing each other at once, as after a resume, can
	// each wait 20 s for the other's Hello.
	addr := fmt.Sprintf("tcp://127.0.0.1:%d", other.listen)
	if p.machine > other.machine {
		addr = "dynamic"
	}
	device := fmt.Sprintf(`<device id="%s" name="%s" compression="metadata" introducer="false" skipIntroductionRemovals="false" introducedBy="">
        <address>%s</address>
    </device>`, other.id, other.machine, addr)
	set(`(<configuration [^>]*>)`, "${1}\n    "+strings.ReplaceAll(folder+"\n    "+device, "$", "$$"))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// start configures the peer to share the store with other and runs
// syncthing serve until the test ends.
func (p *peer) start(other *peer) {
	t := p.t
	p.configure(other)
	log, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command("syncthing", "serve", "--home", p.stHome, "--no-browser", "--no-restart")
	p.cmd.Env = p.stEnv()
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		log.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.rest("POST", "/rest/system/shutdown", nil)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
		log.Close()
		if t.Failed() {
			t.Logf("%s: the end of %s:\n%s", p.machine, p.logPath, tail(p.logPath, 15))
		}
	})
}

func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var client = &http.Client{Timeout: 10 * time.Second}

// rest calls Syncthing's REST API and decodes its JSON answer into out.
func (p *peer) rest(method, path string, out any) error {
	req, err := http.NewRequest(method, "http://127.0.0.1:"+strconv.Itoa(p.gui)+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", p.apiKey)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(body))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}

// connected says whether the peer has a connection to other.
func (p *peer) connected(other *peer) bool {
	var c struct {
		Connections map[string]struct{ Connected bool }
	}
	return p.rest("GET", "/rest/system/connections", &c) == nil && c.Connections[other.id].Connected
}

// waitConnected waits until each peer is connected to the other.
// waitListening waits until p accepts connections on its sync port, so
// that the peer started next reaches it at its first dial: two peers
// started at once could both dial before the other listened, then back
// off, and took up to 22 s to meet instead of 2.
func waitListening(t *testing.T, p *peer, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p.listen), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: nothing listens on port %d after %v: %v", p.machine, p.listen, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitConnected(t *testing.T, a, b *peer, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !a.connected(b) || !b.connected(a) {
		if time.Now().After(deadline) {
			t.Fatalf("the peers did not connect within %v", within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// idle says whether the peer has nothing to scan or pull and believes
// other has all it has.
func (p *peer) idle(other *peer) (bool, string) {
	var st struct {
		State          string
		NeedTotalItems int
		PullErrors     int
	}
	if err := p.rest("GET", "/rest/db/status?folder="+folderID, &st); err != nil {
		return false, err.Error()
	}
	var c struct {
		Completion float64
		NeedItems  int
	}
	if err := p.rest("GET", "/rest/db/completion?folder="+folderID+"&device="+other.id, &c); err != nil {
		return false, err.Error()
	}
	why := fmt.Sprintf("%s: state %s, %d items needed, %d pull errors, %s %.1f%% complete", p.machine, st.State, st.NeedTotalItems, st.PullErrors, other.machine, c.Completion)
	return st.State == "idle" && st.NeedTotalItems == 0 && c.Completion == 100 && c.NeedItems == 0, why
}

// syncthingTemp says whether name is a file Syncthing is still receiving.
func syncthingTemp(name string) bool {
	return strings.HasPrefix(name, ".syncthing.") && strings.HasSuffix(name, ".tmp") || strings.HasPrefix(name, "~syncthing~")
}

// ignored says whether the .stignore above keeps name local.
func ignored(name string) bool {
	return name == ".stignore" || name == ".rewrite.lock" || (strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")) || name == "history-global.jsonl.migration-lock"
}

// snapshot lists the shared files of a store, one "path sha256" a line,
// and the Syncthing conflict copies among them.
func snapshot(root string) (list string, conflicts []string) {
	var lines []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == ".stfolder" || name == ".stversions" || ignored(name)) {
				return filepath.SkipDir
			}
			return nil
		}
		if ignored(name) || syncthingTemp(name) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		data, err := os.ReadFile(path)
		if err != nil {
			lines = append(lines, rel+" unreadable")
			return nil
		}
		sum := sha256.Sum256(data)
		lines = append(lines, rel+" "+hex.EncodeToString(sum[:8]))
		if strings.Contains(name, ".sync-conflict-") {
			conflicts = append(conflicts, rel)
		}
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n"), conflicts
}
