// Command hist-capture appends one prompt to the store, when capture is on.
package main

import "hist/cmd/hist-capture/histcapture"

func main() { histcapture.Main() }
