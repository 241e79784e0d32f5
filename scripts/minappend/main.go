// Command minappend is the baseline of the capture benchmark: the least a
// Go program can do to store a prompt, one O_APPEND write of one line.
//
//	minappend FILE LINE
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: minappend FILE LINE")
		os.Exit(2)
	}
	f, err := os.OpenFile(os.Args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err == nil {
		_, err = f.Write([]byte(os.Args[2] + "\n"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "minappend:", err)
		os.Exit(1)
	}
}
