// Command hist-delete removes a prompt from every store file of a scope
// and tombstones it in hidden.json.
package main

import "hist/cmd/hist-delete/histdelete"

func main() { histdelete.Main() }
