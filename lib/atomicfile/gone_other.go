//go:build !unix

package atomicfile

// processGone cannot tell here: a temp file is never taken for stale, so
// a killed rewrite's temp file stays until it is removed by hand.
func processGone(int) bool { return false }
