package retrieval

// kernel computes dot products of one query with consecutive matrix rows.
// The portable kernel is always available; an assembly kernel is chosen at
// Open when the CPU supports it (see simdKernel).
type kernel struct {
	name string
	// dots sets out[r] = dot(q[:dims], m[r*dims:(r+1)*dims]) for every r < len(out).
	dots func(q, m []float32, dims int, out []float32)
	// sum returns the sum of m; only the memory-floor benchmark uses it.
	sum func(m []float32) float32
}

func portableKernel() kernel {
	return kernel{name: "go", dots: dotsGo, sum: sumGo}
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

func sumGo(m []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(m); i += 4 {
		s0 += m[i]
		s1 += m[i+1]
		s2 += m[i+2]
		s3 += m[i+3]
	}
	for ; i < len(m); i++ {
		s0 += m[i]
	}
	return (s0 + s1) + (s2 + s3)
}
