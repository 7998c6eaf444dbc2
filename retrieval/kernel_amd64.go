//go:build amd64 && !purego && !noasm

package retrieval

import "golang.org/x/sys/cpu"

// dotsAVX2 sets out[r] = dot(q[:dims], m[r*dims:]) for r < rows, using AVX2
// and FMA. Implemented in kernel_amd64.s.
//
//go:noescape
func dotsAVX2(q, m *float32, dims, rows int, out *float32)

// sumAVX2 returns the sum of p[:n] using AVX2. Implemented in kernel_amd64.s.
//
//go:noescape
func sumAVX2(p *float32, n int) float32

func simdKernel() (kernel, bool) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return kernel{}, false
	}
	return kernel{name: "avx2+fma", dots: dotsAsm, sum: sumAsm}, true
}

func dotsAsm(q, m []float32, dims int, out []float32) {
	rows := len(out)
	if rows == 0 || dims <= 0 {
		for i := range out {
			out[i] = 0
		}
		return
	}
	// Bounds are checked here, once, so the assembly may not read past them.
	_ = q[dims-1]
	_ = m[rows*dims-1]
	dotsAVX2(&q[0], &m[0], dims, rows, &out[0])
}

func sumAsm(m []float32) float32 {
	if len(m) == 0 {
		return 0
	}
	return sumAVX2(&m[0], len(m))
}
