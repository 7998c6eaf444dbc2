package canonjson_test

import (
	"fmt"

	"github.com/candorkit/candor/internal/canonjson"
)

func ExampleCanonicalize() {
	out, err := canonjson.Canonicalize([]byte(`{ "b": [1.0, "<x>"], "a": true }`))
	fmt.Println(string(out), err)

	_, err = canonjson.Canonicalize([]byte(`{"a":1}}`))
	fmt.Println(err)
	// Output:
	// {"a":true,"b":[1.0,"<x>"]} <nil>
	// canonjson: at offset 7: data after the JSON value ('}')
}
