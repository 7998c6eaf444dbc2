package a2a_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/reply"
)

func TestMapReply(t *testing.T) {
	cases := []struct {
		name  string
		r     reply.Reply
		err   error
		state a2a.State
		text  string
		raw   string
		kind  a2a.Kind
	}{
		{"answer", reply.Reply{Answer: "7305 in stock"}, nil, a2a.Completed, "7305 in stock", "", a2a.KindNone},
		{"escalate", reply.Reply{Answer: "ask the warehouse", Escalate: true}, nil, a2a.Failed, "ask the warehouse", "", a2a.KindEscalated},
		{"blank answer", reply.Reply{Answer: " "}, nil, a2a.Failed, "the backend returned an invalid answer", "", a2a.KindInvalidOutcome},
		{"empty", reply.Reply{}, reply.ErrEmpty, a2a.Failed, "the workflow returned no reply", "", a2a.KindNoReply},
		{"status", reply.Reply{}, &reply.StatusError{StatusCode: 502, Body: []byte("  bad gateway\n")}, a2a.Failed, "the workflow answered HTTP 502 Bad Gateway", "bad gateway", a2a.KindHTTPStatus},
		{"status, no body", reply.Reply{}, &reply.StatusError{StatusCode: 500}, a2a.Failed, "the workflow answered HTTP 500 Internal Server Error", "", a2a.KindHTTPStatus},
		{"off contract", reply.Reply{}, &reply.ContractError{StatusCode: 200, Reason: `missing key "escalate"`, Raw: []byte(`{"answer":"ok"}`)}, a2a.Failed, `the workflow reply is off-contract: missing key "escalate"`, `{"answer":"ok"}`, a2a.KindOffContract},
		{"too large", reply.Reply{}, &reply.TooLargeError{StatusCode: 200, Limit: 10}, a2a.Failed, "the workflow reply exceeds the size cap", "", a2a.KindTooLarge},
		{"timeout", reply.Reply{}, &reply.TransportError{URL: "https://h", Err: context.DeadlineExceeded}, a2a.Failed, "the workflow did not answer in time", "", a2a.KindTimeout},
		{"canceled", reply.Reply{}, &reply.TransportError{URL: "https://h", Err: context.Canceled}, a2a.Failed, "the question was withdrawn before the workflow answered", "", a2a.KindCanceled},
		{"unreachable", reply.Reply{}, &reply.TransportError{URL: "https://h", Err: errors.New("connection refused")}, a2a.Failed, "the workflow could not be reached", "", a2a.KindUnreachable},
		{"no token", reply.Reply{}, reply.ErrNoToken, a2a.Failed, "no identity: the request carried no bearer token", "", a2a.KindNoIdentity},
		{"other", reply.Reply{}, errors.New("encoding"), a2a.Failed, "the workflow could not be called", "", a2a.KindBackend},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := a2a.MapReply(tc.r, tc.err)
			assert.Equal(t, tc.state, o.State)
			assert.Equal(t, tc.text, o.Text)
			assert.Equal(t, tc.raw, string(o.Raw))
			assert.Equal(t, tc.kind, a2a.Classify(o.Err))
			if tc.err != nil {
				assert.ErrorIs(t, o.Err, tc.err, "the reply's error stays reachable")
			}
		})
	}
	assert.Equal(t, a2a.KindBackend, a2a.Classify(fmt.Errorf("mcp: %w", errors.New("503"))))
	assert.ErrorIs(t, a2a.MapReply(reply.Reply{Answer: " "}, nil).Err, a2a.ErrInvalidOutcome)
	c, err := testVerifier.Verify(context.Background(), "tok-x")
	assert.NoError(t, err)
	assert.NotEmpty(t, c.Subject)
}
