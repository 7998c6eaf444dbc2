package generate_test

import (
	"fmt"

	"github.com/candorkit/candor/examples/builder/internal/generate"
)

func ExampleExtractWorkflow() {
	reply := "Here is your workflow:\n```json\n{\"name\":\"Ping\",\"nodes\":[],\"connections\":{}}\n```\nLet me know!"
	wf, err := generate.ExtractWorkflow([]byte(reply))
	fmt.Println(string(wf), err)

	_, err = generate.ExtractWorkflow([]byte("I could not do it."))
	fmt.Println(err)
	// Output:
	// {"name":"Ping","nodes":[],"connections":{}} <nil>
	// generate: the reply holds no JSON object that parses
}
