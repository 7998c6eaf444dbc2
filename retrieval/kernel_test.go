package retrieval

import (
	"math"
	"math/rand/v2"
	"testing"
)

// dotBound is the tolerance of the kernel property test. Any order of
// float32 summation of n products (with or without FMA) differs from the
// exact dot product by at most n·u·Σ|a_i·b_i|, u = 2^-24 (the classic
// recursive-summation bound, which covers blocked and pairwise orders). The
// test holds both kernels to that bound against a float64 reference, and to
// twice it against each other.
func dotBound(a, b []float32) float64 {
	var abs float64
	for i := range a {
		abs += math.Abs(float64(a[i]) * float64(b[i]))
	}
	return float64(len(a)+1)*0x1p-24*abs + 1e-30
}

func dot64(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func TestKernelsAgree(t *testing.T) {
	simd, ok := simdKernel()
	if !ok {
		t.Skip("no assembly kernel in this build or on this CPU; the portable kernel is the only one")
	}
	t.Logf("assembly kernel: %s", simd.name)
	r := rand.New(rand.NewPCG(1, 2))
	kernels := []kernel{portableKernel(), simd}
	for trial := range 400 {
		dims := 1 + r.IntN(1100)
		if trial < 70 {
			dims = trial + 1 // every tail length of the 32/8/1 loops
		}
		rows := 1 + r.IntN(5)
		q := randVec(r, dims)
		m := randVec(r, dims*rows)
		got := make([][]float32, len(kernels))
		for ki, k := range kernels {
			got[ki] = make([]float32, rows)
			k.dots(q, m, dims, got[ki])
		}
		for row := range rows {
			b := m[row*dims : (row+1)*dims]
			want, tol := dot64(q, b), dotBound(q, b)
			for ki, k := range kernels {
				if d := math.Abs(float64(got[ki][row]) - want); d > tol {
					t.Fatalf("%s: dims %d row %d: got %g, exact %g, |diff| %g > bound %g", k.name, dims, row, got[ki][row], want, d, tol)
				}
			}
			if d := math.Abs(float64(got[0][row] - got[1][row])); d > 2*tol {
				t.Fatalf("dims %d row %d: go %g vs asm %g differ by %g > %g", dims, row, got[0][row], got[1][row], d, 2*tol)
			}
		}
	}
}

func TestSumKernelsAgree(t *testing.T) {
	simd, ok := simdKernel()
	if !ok {
		t.Skip("no assembly kernel")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 300 {
		v := randVec(r, n)
		var exact, abs float64
		for _, x := range v {
			exact += float64(x)
			abs += math.Abs(float64(x))
		}
		tol := float64(n+1)*0x1p-24*abs + 1e-30
		for _, k := range []kernel{portableKernel(), simd} {
			if d := math.Abs(float64(k.sum(v)) - exact); d > tol {
				t.Fatalf("%s: n %d: sum %g, exact %g", k.name, n, k.sum(v), exact)
			}
		}
	}
}

func TestDotsEmpty(t *testing.T) {
	for _, k := range []kernel{portableKernel(), bestKernel()} {
		k.dots([]float32{1}, nil, 1, nil) // no rows: must not touch memory
		if s := k.sum(nil); s != 0 {
			t.Fatalf("%s: sum of nothing = %g", k.name, s)
		}
	}
}
