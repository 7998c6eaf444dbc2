package mcpclient

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamRT answers a POST with the event stream first and every GET with
// the stream resume, in memory, recording when each GET was sent.
type streamRT struct {
	first, resume string

	mu   sync.Mutex
	gets []time.Time
}

func (s *streamRT) RoundTrip(req *http.Request) (*http.Response, error) {
	body := s.first
	if req.Method == http.MethodGet {
		s.mu.Lock()
		s.gets = append(s.gets, time.Now())
		s.mu.Unlock()
		body = s.resume
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    req,
	}, nil
}

// The delays between resumptions are the stream's retry field, or 1 s
// without one, on a fake clock.
func TestResumeDelaysHonourRetry(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first string
		want  time.Duration
	}{
		{"retry", "id: ev-1\nretry: 2500\ndata:\n\n", 2500 * time.Millisecond},
		{"default", "id: ev-1\ndata:\n\n", defaultResumeDelay},
		{"retry-zero", "id: ev-1\nretry: 0\n\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := &streamRT{first: tc.first}
				origin, _ := url.Parse("http://mcp.test/mcp")
				w := &wire{base: rt, origin: origin, maxBody: 1 << 20, budget: &budget{}, resume: defaultResumePolicy}
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, origin.String(), strings.NewReader(`{}`))
				require.NoError(t, err)
				start := time.Now()
				resp, err := w.RoundTrip(req)
				require.NoError(t, err)
				_, err = io.ReadAll(resp.Body)
				require.ErrorIs(t, err, ErrOutcomeUnknown)
				require.Len(t, rt.gets, maxResumes)
				prev := start
				for i, at := range rt.gets {
					assert.Equal(t, tc.want, at.Sub(prev), "delay before resumption %d", i+1)
					prev = at
				}
				assert.Equal(t, int64(maxResumes), w.budget.calls.Load())
			})
		})
	}
}

// mcp-go closes the body of an event stream as soon as it has the
// response, while its reader still waits for the end of the stream; the
// read that the close fails comes after the response and must not turn the
// call into an unknown outcome. The server here holds the stream open
// after the response, so the read is always cut by the close.
func TestCloseAfterTheResponseIsNotAnUnknownOutcome(t *testing.T) {
	held := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "id: ev-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the stream stays open until the client closes it
		close(held)
	}))
	t.Cleanup(srv.Close)
	origin, err := url.Parse(srv.URL)
	require.NoError(t, err)
	w := &wire{base: srv.Client().Transport, origin: origin, maxBody: 1 << 20, budget: &budget{}, resume: defaultResumePolicy}
	ex := &exchange{}
	req, err := http.NewRequestWithContext(withExchange(t.Context(), ex), http.MethodPost, srv.URL, strings.NewReader(`{}`))
	require.NoError(t, err)
	resp, err := w.RoundTrip(req)
	require.NoError(t, err)

	// Read as mcp-go does: line by line, going on after the response.
	gotResponse := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				readErr <- err
				return
			}
			if strings.HasPrefix(line, "data:") {
				close(gotResponse)
			}
		}
	}()
	<-gotResponse
	require.NoError(t, resp.Body.Close())
	err = <-readErr
	require.Error(t, err, "the close cuts the read that waits for the end of the stream")
	assert.NotErrorIs(t, err, ErrOutcomeUnknown)
	<-held

	snap := ex.snapshot()
	assert.NoError(t, snap.cut, "nothing cut the exchange off before its response")
	assert.True(t, snap.hasRaw)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, string(snap.raw))
}
