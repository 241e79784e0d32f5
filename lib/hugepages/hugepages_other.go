//go:build !linux

package hugepages

func forHeap(int) {}
