package scan_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/candorkit/candor/internal/scan"
)

func ExampleScan() {
	pages := map[string]scan.Page[string]{
		"":   {Items: []string{"a", "b"}, Next: "c2", Total: 3},
		"c2": {Items: []string{"c"}, Total: 3},
	}
	fetch := func(_ context.Context, cursor string) (scan.Page[string], error) {
		return pages[cursor], nil
	}
	items, err := scan.Scan(context.Background(), fetch, scan.Limits{MaxPages: 10})
	fmt.Println(items, err)
	// Output: [a b c] <nil>
}

func ExampleSeq() {
	// A peer that sends the same cursor for ever.
	fetch := func(context.Context, string) (scan.Page[int], error) {
		return scan.Page[int]{Items: []int{1}, Next: "again", Total: scan.UnknownTotal}, nil
	}
	for v, err := range scan.Seq(context.Background(), fetch, scan.Limits{}) {
		if err != nil {
			fmt.Println(errors.Is(err, scan.ErrCursorRepeat), err)
			break
		}
		fmt.Println("item", v)
	}
	// Output:
	// item 1
	// item 1
	// true scan: incomplete after 2 page(s), 2 item(s): the peer repeated cursor "again"
}
