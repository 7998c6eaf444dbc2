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

// kernels returns the portable kernel and, when this build and CPU have
// one, the assembly kernel.
func kernels(t *testing.T) []kernel {
	ks := []kernel{portableKernel()}
	if k, ok := simdKernel(); ok {
		ks = append(ks, k)
	} else {
		t.Log("no assembly kernel in this build or on this CPU: only the portable kernel is checked")
	}
	return ks
}

func TestKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kernels := kernels(t)
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
			if len(got) == 2 {
				if d := math.Abs(float64(got[0][row] - got[1][row])); d > 2*tol {
					t.Fatalf("dims %d row %d: go %g vs asm %g differ by %g > %g", dims, row, got[0][row], got[1][row], d, 2*tol)
				}
			}
		}
	}
}

func TestSumKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	kernels := kernels(t)
	for n := range 300 {
		v := randVec(r, n)
		var exact, abs float64
		for _, x := range v {
			exact += float64(x)
			abs += math.Abs(float64(x))
		}
		tol := float64(n+1)*0x1p-24*abs + 1e-30
		for _, k := range kernels {
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

func TestNormalise(t *testing.T) {
	maxF := float32(math.MaxFloat32)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for dims := 1; dims <= 9; dims++ {
		for pos := range dims { // a bad component in every position, tails included
			for _, bad := range []float32{nan, inf, -inf} {
				v := make([]float32, dims)
				for i := range v {
					v[i] = 1
				}
				v[pos] = bad
				if got := normalise(v); got != "non-finite component" {
					t.Fatalf("dims %d, %g at %d: %q", dims, bad, pos, got)
				}
			}
		}
		if got := normalise(make([]float32, dims)); got != "zero vector" {
			t.Fatalf("dims %d zero: %q", dims, got)
		}
	}
	// Extreme but finite vectors are normalised, not refused.
	r := rand.New(rand.NewPCG(9, 9))
	for _, v := range [][]float32{
		{maxF, maxF, -maxF, maxF, maxF},
		{math.SmallestNonzeroFloat32, 0, 0},
		randVec(r, 768),
		randVec(r, 37),
	} {
		orig := append([]float32(nil), v...)
		if got := normalise(v); got != "" {
			t.Fatalf("%v: %q", orig, got)
		}
		var ss, ref float64
		for i, x := range v {
			ss += float64(x) * float64(x)
			ref += float64(orig[i]) * float64(orig[i])
		}
		if math.Abs(ss-1) > 1e-6 {
			t.Fatalf("%v normalised to length² %g", orig, ss)
		}
		for i, x := range v { // direction kept
			if want := float64(orig[i]) / math.Sqrt(ref); math.Abs(float64(x)-want) > 1e-6 {
				t.Fatalf("component %d: %g, want %g", i, x, want)
			}
		}
	}
}

func TestDecodeVector(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for _, dims := range []int{1, 3, 768} {
		blob := make([]byte, 4*dims)
		for i := range blob {
			blob[i] = byte(r.Uint32()) // any bits, NaN payloads included
		}
		got := make([]float32, dims)
		decodeVector(got, blob)
		for i, x := range got {
			if b := math.Float32bits(x); b != uint32(blob[4*i])|uint32(blob[4*i+1])<<8|uint32(blob[4*i+2])<<16|uint32(blob[4*i+3])<<24 {
				t.Fatalf("dims %d component %d: bits %08x", dims, i, b)
			}
		}
		if enc := encodeVector(nil, got); string(enc) != string(blob) {
			t.Fatalf("dims %d: encode(decode(b)) != b", dims)
		}
	}
}
