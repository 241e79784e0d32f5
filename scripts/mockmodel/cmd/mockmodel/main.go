// Command mockmodel serves a stand-in model on 127.0.0.1 for the offline
// end-to-end runs of the coding agents (scripts/e2e-agents.sh).
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"hist/scripts/mockmodel"
)

const usage = `Usage:
    mockmodel [--addr 127.0.0.1:0] [--port-file FILE] [--log FILE]

Serves a mock model that answers every request with one short streamed text
reply: OpenAI Chat Completions (POST /v1/chat/completions), OpenAI Responses
(POST /v1/responses) and Anthropic Messages (POST /v1/messages). Prints its
base URL (http://127.0.0.1:PORT) on stdout once it listens, and runs until
killed.

Options:
    --addr ADDR        Listen address. Default: 127.0.0.1:0 (a free port).
    --port-file FILE   Also write the port number to FILE.
    --log FILE         Append one JSON line per request to FILE.
`

func main() {
	fs := flag.NewFlagSet("mockmodel", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	addr := fs.String("addr", "127.0.0.1:0", "")
	portFile := fs.String("port-file", "", "")
	logFile := fs.String("log", "", "")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		os.Exit(2)
	}
	srv := mockmodel.New()
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mockmodel: opening the log: %v\n", err)
			os.Exit(1)
		}
		srv.Log = f
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mockmodel: listening on %s: %v\n", *addr, err)
		os.Exit(1)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if *portFile != "" {
		if err := os.WriteFile(*portFile, fmt.Appendf(nil, "%d\n", port), 0o600); err != nil {
			fmt.Fprintf(os.Stderr, "mockmodel: writing the port file: %v\n", err)
			os.Exit(1)
		}
	}
	fmt.Printf("http://127.0.0.1:%d\n", port)
	if err := http.Serve(ln, srv); err != nil {
		fmt.Fprintf(os.Stderr, "mockmodel: %v\n", err)
		os.Exit(1)
	}
}
