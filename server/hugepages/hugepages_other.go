//go:build !linux

package hugepages

// advise does nothing off Linux: there is no MADV_HUGEPAGE to ask with.
func advise(int64) int64 { return 0 }
