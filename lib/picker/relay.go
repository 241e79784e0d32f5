package picker

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// fzf runs every command it is given through --with-shell, which
// hist-pick sets to itself with CallbackFlag: the child passes the command
// and fzf's state to the selector over a Unix socket and prints the
// answer (docs/hist-pick.md, "How it works").

// CallbackFlag is the first argument of a callback child.
const CallbackFlag = "--fzf-callback"

// relayEnv names the callback socket in the children's environment.
const relayEnv = "HIST_PICK_RELAY"

// request is one callback: the command fzf ran and fzf's state.
type request struct {
	Cmd   string `json:"cmd"`
	Pos   int    `json:"pos"`
	Match int    `json:"match"`
	Total int    `json:"total"`
	Cols  int    `json:"cols"`
	Lines int    `json:"lines"` // the selector's height (fzf's $FZF_LINES)
	Query string `json:"query"`
	Time  int64  `json:"time"` // when the child started (UnixNano): fzf's state is as of then
}

// relay is the selector's end: it answers callbacks with handle.
type relay struct {
	dir    string
	sock   string
	ln     net.Listener
	handle func(request, io.Writer) // writes the answer
}

func newRelay(handle func(request, io.Writer)) (*relay, error) {
	dir, err := os.MkdirTemp("", "hist-pick-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	sock := filepath.Join(dir, "s")
	if len(sock) > 100 { // sun_path is 108 bytes
		os.RemoveAll(dir)
		if dir, err = os.MkdirTemp("/tmp", "hist-pick-"); err != nil {
			return nil, err
		}
		sock = filepath.Join(dir, "s")
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r := &relay{dir: dir, sock: sock, ln: ln, handle: handle}
	go r.serve()
	return r, nil
}

func (r *relay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second))
			var req request
			if err := json.NewDecoder(bufio.NewReader(c)).Decode(&req); err != nil {
				return
			}
			r.handle(req, c)
		}()
	}
}

func (r *relay) close() {
	r.ln.Close()
	os.RemoveAll(r.dir)
}

// Callback is a callback child's whole job: send cmd and fzf's state to
// the selector named by $HIST_PICK_RELAY and print its answer.
func Callback(cmd string, stdout io.Writer) int {
	sock := os.Getenv(relayEnv)
	if sock == "" {
		return 1
	}
	atoi := func(name string) int {
		n, _ := strconv.Atoi(os.Getenv(name))
		return n
	}
	req := request{
		Cmd: cmd, Pos: atoi("FZF_POS"), Match: atoi("FZF_MATCH_COUNT"), Total: atoi("FZF_TOTAL_COUNT"),
		Cols: atoi("FZF_COLUMNS"), Lines: atoi("FZF_LINES"), Query: os.Getenv("FZF_QUERY"), Time: time.Now().UnixNano(),
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		return 1
	}
	defer c.Close()
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return 1
	}
	if _, err := io.Copy(stdout, c); err != nil {
		return 1
	}
	return 0
}

// parseCmd splits a callback command "RUN VERB [ARG]" (fzf quotes
// placeholder values in single quotes).
func parseCmd(cmd string) (run int, verb string, arg string, err error) {
	f := strings.Fields(cmd)
	if len(f) < 2 {
		return 0, "", "", errors.New("short command")
	}
	run, err = strconv.Atoi(f[0])
	if err != nil {
		return 0, "", "", err
	}
	if len(f) > 2 {
		arg = strings.Trim(f[2], "'")
	}
	return run, f[1], arg, nil
}
