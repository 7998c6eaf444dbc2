//go:build amd64 && !purego && !noasm

package retrieval

import "golang.org/x/sys/cpu"

// dotsAVX2 sets out[r] = dot(q[:dims], m[r*dims:]) for r < rows, using AVX2
// and FMA. Implemented in kernel_amd64.s.
//
//go:noescape
func dotsAVX2(q, m *float32, dims, rows int, out *float32)

// dots16AVX2 sets out[r] = dot(q[:dims8], half row r) for r < rows, rows
// being stride halves apart; dims8 is a positive multiple of 8. It uses F16C
// to widen the halves, and AVX2 and FMA. Implemented in kernel_amd64.s.
//
//go:noescape
func dots16AVX2(q *float32, m *uint16, dims8, stride, rows int, out *float32)

// toHalfF16C rounds n float32 (a positive multiple of 8) to halves, ties to
// even. Implemented in kernel_amd64.s.
//
//go:noescape
func toHalfF16C(src *float32, dst *uint16, n int)

func simdKernel() (kernel, bool) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasF16C {
		return kernel{}, false
	}
	return kernel{name: "avx2+fma+f16c", dots: dotsAsm, dots16: dots16Asm, toHalf: toHalfAsm}, true
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

func dots16Asm(q []float32, m []uint16, dims int, out []float32) {
	rows := len(out)
	if rows == 0 || dims <= 0 {
		for i := range out {
			out[i] = 0
		}
		return
	}
	_ = q[dims-1]
	_ = m[rows*dims-1]
	d8 := dims &^ 7
	if d8 > 0 {
		dots16AVX2(&q[0], &m[0], d8, dims, rows, &out[0])
	} else {
		clear(out)
	}
	if d8 == dims {
		return
	}
	t := halfTable()
	for r := range out {
		row := m[r*dims : (r+1)*dims]
		s := out[r]
		for i := d8; i < dims; i++ {
			s += q[i] * t[row[i]]
		}
		out[r] = s
	}
}

func toHalfAsm(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	n8 := len(src) &^ 7
	if n8 > 0 {
		toHalfF16C(&src[0], &dst[0], n8)
	}
	for i := n8; i < len(src); i++ {
		dst[i] = floatToHalf(src[i])
	}
}
