//go:build !amd64 || purego || noasm

package retrieval

// simdKernel reports that this build has no assembly kernel (another
// architecture, or the purego / noasm build tag).
func simdKernel() (kernel, bool) { return kernel{}, false }
