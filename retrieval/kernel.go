package retrieval

import (
	"math"
	"sync"
)

// kernel computes dot products of one query with consecutive matrix rows.
// The portable kernel is always available; an assembly kernel is chosen at
// Open when the CPU supports it (see simdKernel).
type kernel struct {
	name string
	// dots sets out[r] = dot(q[:dims], m[r*dims:(r+1)*dims]) for every r < len(out).
	dots func(q, m []float32, dims int, out []float32)
	// dots16 is dots over a matrix of IEEE half-precision rows.
	dots16 func(q []float32, m []uint16, dims int, out []float32)
	// toHalf sets dst[i] to src[i] rounded to the nearest half-precision
	// value (ties to even); len(dst) == len(src).
	toHalf func(dst []uint16, src []float32)
}

func portableKernel() kernel {
	return kernel{name: "go", dots: dotsGo, dots16: dots16Go, toHalf: toHalfGo}
}

// bestKernel returns the assembly kernel when this build has one and the CPU
// supports it, and the portable kernel otherwise.
func bestKernel() kernel {
	if k, ok := simdKernel(); ok {
		return k
	}
	return portableKernel()
}

func dotsGo(q, m []float32, dims int, out []float32) {
	q = q[:dims]
	for r := range out {
		out[r] = dotGo(q, m[r*dims:(r+1)*dims])
	}
}

// dotGo is a four-way unrolled dot product; a and b have the same length.
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// halfTable maps every half-precision bit pattern to its float32 value.
var halfTable = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = halfToFloat(uint16(h))
	}
	return &t
})

func dots16Go(q []float32, m []uint16, dims int, out []float32) {
	t := halfTable()
	q = q[:dims]
	for r := range out {
		row := m[r*dims : (r+1)*dims]
		var s0, s1, s2, s3 float32
		i := 0
		for ; i+4 <= dims; i += 4 {
			s0 += q[i] * t[row[i]]
			s1 += q[i+1] * t[row[i+1]]
			s2 += q[i+2] * t[row[i+2]]
			s3 += q[i+3] * t[row[i+3]]
		}
		for ; i < dims; i++ {
			s0 += q[i] * t[row[i]]
		}
		out[r] = (s0 + s1) + (s2 + s3)
	}
}

func toHalfGo(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = floatToHalf(x)
	}
}

// halfToFloat returns the value of an IEEE 754 binary16 bit pattern.
func halfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // infinity or NaN (quiet, payload kept)
		return math.Float32frombits(sign | 0x7f800000 | man<<13 | boolBit(man != 0)<<22)
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: man × 2⁻²⁴, exact in float32
		v := float32(man) * 0x1p-24
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

func boolBit(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// floatToHalf rounds f to the nearest binary16 value, ties to even, as the
// F16C instruction VCVTPS2PH does with rounding control 0: values beyond the
// largest half round to infinity, NaN stays a quiet NaN.
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00 | uint16(man>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // a half subnormal (or zero): units of 2⁻²⁴
		if exp == 0 {
			return sign // float32 subnormals are far below 2⁻²⁵
		}
		m := man | 0x800000
		s := uint(14 - e)
		if s > 24 {
			return sign
		}
		q := m >> s
		rem := m & (1<<s - 1)
		half := uint32(1) << (s - 1)
		if rem > half || (rem == half && q&1 == 1) {
			q++
		}
		return sign | uint16(q)
	}
	m := man >> 13
	rem := man & 0x1fff
	h := uint32(e)<<10 | m
	if rem > 0x1000 || (rem == 0x1000 && m&1 == 1) {
		h++ // a carry into the exponent is the right result, up to infinity
	}
	return sign | uint16(h)
}
