//go:build linux

package retrieval

import (
	"os"

	"golang.org/x/sys/unix"
)

// canMap reports whether vector files can be mapped into memory.
const canMap = true

// mapFile maps the first size bytes of f read-only and shared: the pages
// are the page cache's, so nothing is copied and no anonymous memory is
// touched.
func mapFile(f *os.File, size int64) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}

func unmapFile(b []byte) error { return unix.Munmap(b) }

// adviseSequential announces one sequential pass (read-ahead, and the
// pages read before the mapping is faulted in); adviseNormal restores the
// default for the searches that follow. Both are only advice.
func adviseSequential(b []byte) {
	_ = unix.Madvise(b, unix.MADV_SEQUENTIAL)
	_ = unix.Madvise(b, unix.MADV_WILLNEED)
}

func adviseNormal(b []byte) { _ = unix.Madvise(b, unix.MADV_NORMAL) }
