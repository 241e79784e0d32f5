// Command hist-stats prints statistics of a scope's prompts: per day, per
// agent, per project, by hour of day, and the most reused.
package main

import "hist/cmd/hist-stats/histstats"

func main() { histstats.Main() }
