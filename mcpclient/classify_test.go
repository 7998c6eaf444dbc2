package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/mcpclient/mcptest"
)

// Every kind, from failures real servers produce where they can.
func TestClassifyOnRealServers(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearer("right"))
		tok := WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "right"}))
		c := dial(t, srv.URL, tok)
		call := func(tool string, args any) error {
			_, err := c.Call(t.Context(), tool, args)
			return err
		}
		_, decodeErr := CallJSON[[]int](t.Context(), c, mcptest.ToolEcho, map[string]int{"a": 1})
		past, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
		defer cancel()
		_, timeoutErr := c.Call(past, mcptest.ToolEcho, nil)
		done, stop := context.WithCancel(t.Context())
		stop()
		_, canceledErr := c.Call(done, mcptest.ToolEcho, nil)
		_, unauthErr := Dial(t.Context(), srv.URL, WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "wrong"})))
		_, noTokenErr := Dial(t.Context(), srv.URL, WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{})))
		small := dial(t, srv.URL, tok, WithMaxResponseBytes(4096))
		_, tooLargeErr := small.Call(t.Context(), mcptest.ToolBig, map[string]int{"bytes": 10_000})
		spent := dial(t, srv.URL, tok, WithBudget(Budget{MaxCalls: 1}))
		_, _ = spent.Call(t.Context(), mcptest.ToolEcho, nil)
		_, budgetErr := spent.Call(t.Context(), mcptest.ToolEcho, nil)
		_, transportErr := Dial(t.Context(), "http://127.0.0.1:1/mcp")
		_, badURLErr := Dial(t.Context(), "ftp://example.com/mcp")
		_, scanErr := Pages[mcptest.Item](t.Context(), c, mcptest.ToolList, nil, PageOptions{Size: 10, MaxPages: 1})
		closed := dial(t, srv.URL, tok)
		require.NoError(t, closed.Close())
		_, closedErr := closed.Call(t.Context(), mcptest.ToolEcho, nil)

		for _, tc := range []struct {
			err  error
			want Kind
		}{
			{nil, KindNone},
			{call(mcptest.ToolFail, nil), KindToolError},
			{call(mcptest.ToolEcho, []int{1}), KindInvalidArgument},
			{badURLErr, KindInvalidArgument},
			{decodeErr, KindDecode},
			{timeoutErr, KindTimeout},
			{canceledErr, KindCanceled},
			{unauthErr, KindUnauthorized},
			{noTokenErr, KindNoToken},
			{tooLargeErr, KindTooLarge},
			{budgetErr, KindBudgetExceeded},
			{transportErr, KindTransport},
			{scanErr, KindIncomplete},
			{closedErr, KindClosed},
		} {
			assert.Equal(t, tc.want, Classify(tc.err), "%v", tc.err)
		}
		if kind == mcptest.MCPGo {
			assert.Equal(t, KindProtocol, Classify(call(mcptest.ToolGoError, nil)))
		}
	})
}

func TestClassifyOrder(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Kind
	}{
		{&OutcomeUnknownError{Err: fmt.Errorf("%w: read 9 bytes", ErrBudgetExceeded)}, KindOutcomeUnknown},
		{&OutcomeUnknownError{Err: &StatusError{StatusCode: http.StatusNotFound, expired: true}}, KindOutcomeUnknown},
		{fmt.Errorf("mcpclient: tool %q: %w", "x", &StatusError{StatusCode: http.StatusNotFound, expired: true}), KindSessionExpired},
		{&StatusError{StatusCode: http.StatusNotFound}, KindStatus},
		{&StatusError{StatusCode: http.StatusForbidden}, KindForbidden},
		{&StatusError{StatusCode: http.StatusUnauthorized}, KindUnauthorized},
		{&MalformedResultError{IsError: true}, KindMalformedResult},
		{fmt.Errorf("%w: sent 1, received 2", ErrIDMismatch), KindMalformedResult},
		{&ProtocolError{Code: -32602}, KindProtocol},
		{errors.New("anything else"), KindTransport},
	} {
		assert.Equal(t, tc.want, Classify(tc.err), "%v", tc.err)
	}
}
