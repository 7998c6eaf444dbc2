package catalog

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

//go:embed products.csv
var embeddedCSV []byte

// Product is one catalog reference, encoded with the field names of the
// classicmodels CSV header (the product object of the catalog tools).
type Product struct {
	Code            string  `json:"productCode"`
	Name            string  `json:"productName"`
	Line            string  `json:"productLine"`
	Scale           string  `json:"productScale"`
	Vendor          string  `json:"productVendor"`
	QuantityInStock int     `json:"quantityInStock"`
	BuyPrice        float64 `json:"buyPrice"`
}

var header = []string{"productCode", "productName", "productLine", "productScale", "productVendor", "quantityInStock", "buyPrice"}

// MaxCSVBytes bounds what ParseCSV reads.
const MaxCSVBytes = 8 << 20

// ParseCSV reads a product CSV with exactly the classicmodels header. A row
// with a wrong field count, a non-integer stock, a non-numeric price, an
// empty or repeated code is an error naming the line; nothing is dropped
// silently. At most MaxCSVBytes are read.
func ParseCSV(r io.Reader) ([]Product, error) {
	lr := &io.LimitedReader{R: r, N: MaxCSVBytes + 1}
	cr := csv.NewReader(lr)
	cr.FieldsPerRecord = len(header)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("catalog: reading CSV header: %w", err)
	}
	if !slices.Equal(head, header) {
		return nil, fmt.Errorf("catalog: CSV header %q, want %q", head, header)
	}
	var out []Product
	seen := map[string]bool{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		line, _ := cr.FieldPos(0)
		code := strings.TrimSpace(rec[0])
		if code == "" {
			return nil, fmt.Errorf("catalog: line %d: empty productCode", line)
		}
		if seen[code] {
			return nil, fmt.Errorf("catalog: line %d: productCode %s repeated", line, code)
		}
		seen[code] = true
		qty, err := strconv.Atoi(rec[5])
		if err != nil {
			return nil, fmt.Errorf("catalog: line %d: quantityInStock %q: %w", line, rec[5], err)
		}
		price, err := strconv.ParseFloat(rec[6], 64)
		if err != nil {
			return nil, fmt.Errorf("catalog: line %d: buyPrice %q: %w", line, rec[6], err)
		}
		out = append(out, Product{Code: code, Name: rec[1], Line: rec[2], Scale: rec[3], Vendor: rec[4], QuantityInStock: qty, BuyPrice: price})
	}
	if lr.N <= 0 {
		return nil, fmt.Errorf("catalog: CSV larger than %d bytes", MaxCSVBytes)
	}
	return out, nil
}

// Products returns a fresh copy of the embedded 110-product classicmodels
// catalog.
func Products() ([]Product, error) {
	return ParseCSV(bytes.NewReader(embeddedCSV))
}
