// Package hugepages asks the kernel to back the Go heap with transparent
// huge pages where it gives them only on request (the "madvise" mode that
// many distributions default to).
//
// A program that streams a lot through a heap of a hundred megabytes or
// so touches every page of it for the first time once, and each first
// touch of a 4 KB page is a fault: 25,000 of them for 100 MB. Where faults
// are dear (the virtual machine the benchmarks run on spends about 17 µs on
// each), they cost as much as reading the input. With 2 MB pages there are
// 50.
package hugepages

// ForHeap marks the next n bytes of heap address space for huge pages, on
// Linux in "madvise" mode; elsewhere, or when a limit on the address space
// could make the reservation fail, it does nothing. Call it once, early in
// main: it maps n bytes (without touching them), marks them, and hands
// them back to the runtime, which then places the heap there first.
func ForHeap(n int) { forHeap(n) }
