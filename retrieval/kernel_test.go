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

func TestDotsEmpty(t *testing.T) {
	for _, k := range []kernel{portableKernel(), bestKernel()} {
		k.dots([]float32{1}, nil, 1, nil) // no rows: must not touch memory
		k.dots16([]float32{1}, nil, 1, nil)
	}
}

// Every half converts to the same float32 in the table and in the F16C
// instruction, and float32 values round to the same half in Go and in
// F16C: around every half boundary, at the midpoints (ties to even), in the
// subnormal range and beyond the largest half.
func TestHalfConversionsAgree(t *testing.T) {
	ks := kernels(t)
	tab := halfTable()
	// Half -> float: a one-hot query reads component i of a row.
	all := make([]uint16, 1<<16)
	for h := range all {
		all[h] = uint16(h)
	}
	for _, k := range ks {
		const dims = 16
		q := make([]float32, dims)
		q[3] = 1
		out := make([]float32, len(all)/dims)
		k.dots16(q, all, dims, out)
		for r, got := range out {
			h := uint16(r*dims + 3)
			want := tab[h]
			exp := h >> 10 & 0x1f
			if exp == 0x1f {
				continue // NaN and infinity: the product with 0s is NaN either way
			}
			if math.Float32bits(got) != math.Float32bits(want) && !(got == 0 && want == 0) {
				t.Fatalf("%s: half %04x reads %g, table %g", k.name, h, got, want)
			}
		}
	}
	for h := range 1 << 16 {
		f := tab[h]
		if h>>10&0x1f == 0x1f {
			continue
		}
		if back := floatToHalf(f); back != uint16(h) {
			t.Fatalf("half %04x -> %g -> %04x", h, f, back)
		}
	}
	// Float -> half, Go against F16C, on values around every boundary.
	var src []float32
	for h := range 0x7c00 {
		lo, hi := tab[h], tab[h+1]
		mid := float32((float64(lo) + float64(hi)) / 2)
		for _, x := range []float32{lo, hi, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 2)} {
			src = append(src, x, -x)
		}
	}
	src = append(src, 65504, 65519.99, 65520, 1e10, float32(math.Inf(1)), 0x1p-25, 0x1p-26, math.SmallestNonzeroFloat32)
	go16 := make([]uint16, len(src))
	toHalfGo(go16, src)
	for _, k := range ks {
		got := make([]uint16, len(src))
		k.toHalf(got, src)
		for i := range src {
			if got[i] != go16[i] {
				t.Fatalf("%s: %g (bits %08x) -> %04x, Go %04x", k.name, src[i], math.Float32bits(src[i]), got[i], go16[i])
			}
		}
	}
	// Nearest, ties to even, checked against exact arithmetic for normal
	// halves.
	for i, x := range src {
		h := go16[i]
		if math.IsInf(float64(x), 0) || math.Abs(float64(x)) > 65504 {
			continue
		}
		v := float64(tab[h])
		d := math.Abs(v - float64(x))
		for _, nb := range []uint16{h - 1, h + 1} {
			if nb>>10&0x1f == 0x1f || nb&0x7fff == 0x7fff {
				continue
			}
			if dn := math.Abs(float64(tab[nb]) - float64(x)); dn < d || (dn == d && nb&1 == 0 && h&1 == 1 && nb>>15 == h>>15) {
				t.Fatalf("%g rounds to %04x (%g), %04x (%g) is nearer or the even tie", x, h, v, nb, tab[nb])
			}
		}
	}
}

func TestDots16Agree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ks := kernels(t)
	for trial := range 200 {
		dims := 1 + r.IntN(800)
		if trial < 40 {
			dims = trial + 1
		}
		rows := 1 + r.IntN(4)
		q := randVec(r, dims)
		m32 := randVec(r, dims*rows)
		for i := 0; i < rows; i++ {
			normalise(m32[i*dims : (i+1)*dims])
		}
		m16 := make([]uint16, len(m32))
		toHalfGo(m16, m32)
		normalise(q)
		e := scanBound(q, true)
		for _, k := range ks {
			out := make([]float32, rows)
			k.dots16(q, m16, dims, out)
			for row := range rows {
				exact := exactScore(q, m32[row*dims:(row+1)*dims])
				if d := math.Abs(float64(out[row]) - exact); d > e {
					t.Fatalf("%s: dims %d: half score %g, exact %g, |diff| %g > bound %g", k.name, dims, out[row], exact, d, e)
				}
			}
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
