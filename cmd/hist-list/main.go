// Command hist-list prints the visible prompts of a scope, newest first.
package main

import "hist/cmd/hist-list/histlist"

func main() { histlist.Main() }
