package retrieval

import "math"

// Exactness of the scan.
//
// A search ranks by the exact score S(q, r) = Σ qᵢrᵢ of the normalised query
// q and the normalised stored row r, both float32, evaluated in float64 in
// index order (exactScore): every product of two float32 is exact in
// float64, and the sum's rounding is the same wherever S is computed, so S
// is one well-defined number per (query, row). The returned scores are S
// rounded to float32 and the order is S descending, then chunk ID.
//
// The scan computes a cheaper approximation s̃ (float32 sums, in the kernel's
// order; in half-precision mode over r rounded to binary16), and a bound E
// with |s̃ − S| ≤ E for every row (scanBound). Let T be the k-th largest s̃
// among the admitted rows. The k rows with the largest s̃ each have
// S ≥ s̃ − E ≥ T − E, so the k-th largest S is at least T − E; a row with
// s̃ < T − 2E has S ≤ s̃ + E < T − E and cannot be among the k best, ties
// included. So the scan keeps every row with s̃ ≥ T − 2E (a superset while T
// is still rising, since the running k-th best never exceeds the final T),
// computes S for those rows only, and returns the k best by S: exactly the
// top k by S over all admitted rows.
//
// The bound. Let n be the dimension, u = 2⁻²⁴ and ρ a bound on ‖q‖ and ‖r‖
// (rowNormBound). A float32 sum of n products in any order, with or without
// FMA, differs from the exact sum by at most γ·Σ|qᵢrᵢ|, γ = (n+1)u, and
// Σ|qᵢrᵢ| ≤ ‖q‖‖r‖ ≤ ρ² (Cauchy–Schwarz). S itself, a float64 sum, is
// within n·2⁻⁵³·ρ² of the exact sum. So in float32 mode
//
//	E₃₂ = γρ² + n·2⁻⁵³ρ².
//
// In half mode the row is h = fl₁₆(r): rounding to nearest binary16 changes
// a component by at most 2⁻¹¹|rᵢ| in the normal range and by at most 2⁻²⁵
// (half the subnormal spacing 2⁻²⁴) below it; |rᵢ| ≤ ρ is far below the
// largest half, so there is no overflow. Hence
// |Σqᵢrᵢ − Σqᵢhᵢ| ≤ 2⁻¹¹ρ² + 2⁻²⁵‖q‖₁, the float32 evaluation of Σqᵢhᵢ adds
// at most γ·Σ|qᵢhᵢ| ≤ γ((1+2⁻¹¹)ρ² + 2⁻²⁵‖q‖₁), and
//
//	E₁₆ = 2⁻¹¹ρ² + 2⁻²⁵‖q‖₁ + γ((1+2⁻¹¹)ρ² + 2⁻²⁵‖q‖₁) + n·2⁻⁵³ρ².
//
// Both are multiplied by 1+2⁻²⁰ and padded by 2⁻⁶⁰ to cover the rounding of
// their own float64 evaluation, and the threshold T − 2E is rounded toward
// −∞ before it is compared with float32 scores.
//
// ρ. Stored rows are checked at Open: the kernel's float32 ‖r‖² must lie in
// [1 − 2(n+2)u, 1 + 2(n+2)u] (unitBounds). The kernel's own error is at most
// (n+1)u‖r‖², so ‖r‖² ≤ (1 + 2(n+2)u)/(1 − (n+1)u) ≤ 1 + 4(n+2)u for
// n ≤ 2¹⁶, and ‖r‖ ≤ 1 + 2(n+2)u = ρ. A row normalised by this package
// passes: rounding each component of an exactly unit vector to float32
// leaves ‖r‖² within 2⁻²³ of 1, and the kernel adds at most (n+1)u(1+2⁻²³).
// Queries are normalised the same way, so ‖q‖ ≤ ρ as well.

func rowNormBound(dims int) float64 { return 1 + 2*float64(dims+2)*0x1p-24 }

// unitBounds is the range the kernel's float32 squared length of a stored
// row must fall in.
func unitBounds(dims int) (lo, hi float32) {
	d := 2 * float64(dims+2) * 0x1p-24
	return float32(1 - d), float32(1 + d)
}

// scanBound returns E for a normalised query q (see above).
func scanBound(q []float32, half bool) float64 {
	n := float64(len(q))
	rho := rowNormBound(len(q))
	rho2 := rho * rho
	gamma := (n + 1) * 0x1p-24
	e := gamma*rho2 + n*0x1p-53*rho2
	if half {
		var l1 float64
		for _, x := range q {
			l1 += math.Abs(float64(x))
		}
		e = 0x1p-11*rho2 + 0x1p-25*l1 + gamma*((1+0x1p-11)*rho2+0x1p-25*l1) + n*0x1p-53*rho2
	}
	return e*(1+0x1p-20) + 0x1p-60
}

// cutoff returns the float32 score below which a row cannot reach the top
// k once the k-th best approximate score is t: t − 2E, rounded down.
func cutoff(t float32, e float64) float32 {
	c := float64(t) - 2*e
	f := float32(c)
	if float64(f) > c {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return f
}

// exactScore is S(q, r): the float64 sum, in index order, of the exact
// products of two float32 vectors.
func exactScore(q, r []float32) float64 {
	r = r[:len(q)]
	var s float64
	for i, x := range q {
		s += float64(x) * float64(r[i])
	}
	return s
}
