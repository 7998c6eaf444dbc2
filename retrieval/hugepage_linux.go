//go:build linux

package retrieval

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHugePages asks the kernel to back b with transparent huge pages
// where it is configured to do so on request ("madvise" mode). b is a new
// matrix not yet touched: filling it then takes one page fault per 2 MiB
// instead of one per 4 KiB, which is most of the cost of reading a large
// vector file into fresh memory. It is only advice; an error is ignored.
func adviseHugePages(b []byte) {
	const huge = 2 << 20
	if len(b) < 2*huge {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p + huge - 1) &^ (huge - 1)
	end := (p + uintptr(len(b))) &^ (huge - 1)
	if end <= start {
		return
	}
	_ = unix.Madvise(b[start-p:end-p], unix.MADV_HUGEPAGE)
}
