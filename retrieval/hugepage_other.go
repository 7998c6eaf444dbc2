//go:build !linux

package retrieval

func adviseHugePages([]byte) {}
