package check_test

import (
	"fmt"

	"github.com/candorkit/candor/examples/availability/internal/check"
)

func ExampleProductCodes() {
	fmt.Println(check.ProductCodes("Peut-on promettre S10_1949 ?"))
	fmt.Println(check.ProductCodes("Peut-on promettre S99_NOPE ?"))
	fmt.Println(len(check.ProductCodes("Peut-on promettre la Vespa ?")))
	// Output:
	// [S10_1949]
	// [S99_NOPE]
	// 0
}

func ExampleDecide() {
	yes := check.Decide(check.Product{Code: "S10_1949", Name: "1952 Alpine Renault 1300", QuantityInStock: 7305}, check.DefaultThreshold)
	fmt.Println(yes.Escalate, yes.Answer)
	low := check.Decide(check.Product{Code: "S24_2000", Name: "1960 BSA Gold Star DBD34", QuantityInStock: 15}, check.DefaultThreshold)
	fmt.Println(low.Escalate, low.Answer)
	// Output:
	// false Yes — 1952 Alpine Renault 1300 (S10_1949) can be promised: 7305 in stock, above the reorder threshold of 50.
	// true Not without a check — 1960 BSA Gold Star DBD34 (S24_2000) has 15 in stock, below the reorder threshold of 50: a person must confirm before it is promised.
}
