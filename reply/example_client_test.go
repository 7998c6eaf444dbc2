package reply_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/candorkit/candor/reply"
)

func ExampleClient_Call() {
	// A stand-in for a workflow's webhook.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(reply.SubjectTokenHeader) == "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"answer":"7305: 12 in stock","escalate":false}`)
	}))
	defer srv.Close()

	c, err := reply.NewClient(srv.URL + "/webhook/secret-id")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := c.Call(context.Background(), "the caller's token", map[string]string{"text": "stock of 7305?"})
	fmt.Println(r.Answer, r.Escalate, err)

	_, err = c.Call(context.Background(), "", nil)
	fmt.Println(reply.Classify(err))
	// Output:
	// 7305: 12 in stock false <nil>
	// no_identity
}
