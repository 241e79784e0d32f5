// Command hist-compact merges a project's older store files into one
// compact file, without ever losing a prompt (see lib/compact).
package main

import "hist/cmd/hist-compact/histcompact"

func main() { histcompact.Main() }
