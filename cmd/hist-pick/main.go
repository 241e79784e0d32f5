// Command hist-pick opens the prompt history selector and prints the
// chosen prompt.
package main

import "hist/cmd/hist-pick/histpick"

func main() { histpick.Main() }
