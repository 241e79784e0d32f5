// Command hist-seed imports past prompts into the store, once: the agents'
// prompt-recall files into the machine's global file (the legacy
// migration), then each project's prompts from the agents' session
// transcripts into its seed files, and later ones into its import files.
package main

import "hist/cmd/hist-seed/histseed"

func main() { histseed.Main() }
