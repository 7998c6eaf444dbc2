//go:build !linux

package retrieval

import (
	"errors"
	"os"
)

const canMap = false

func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.New("memory mapping not supported") }
func unmapFile([]byte) error                  { return nil }
func adviseSequential([]byte)                 {}
func adviseNormal([]byte)                     {}
