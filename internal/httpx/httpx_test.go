package httpx_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingReader serves n bytes of b and counts what it handed out.
type countingReader struct {
	src   io.Reader
	taken int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.src.Read(p)
	c.taken += int64(n)
	return n, err
}

// chunkReader reads with a fixed buffer size, like a decoder would.
func readWithBuffer(r io.Reader, size int) ([]byte, error) {
	var out []byte
	buf := make([]byte, size)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func TestCappedReaderNeverTakesMoreThanMaxPlusOne(t *testing.T) {
	for _, max := range []int64{0, 1, 7, 100, 4096} {
		for _, bodyLen := range []int64{0, max - 1, max, max + 1, max + 5000, 10 * max} {
			if bodyLen < 0 {
				continue
			}
			for _, bufSize := range []int{1, 3, 512, 32 << 10, 1 << 20} {
				src := &countingReader{src: bytes.NewReader(bytes.Repeat([]byte("x"), int(bodyLen)))}
				cr := httpx.NewCappedReader(src, max)
				got, err := readWithBuffer(cr, bufSize)
				assert.LessOrEqual(t, src.taken, max+1, "max=%d body=%d buf=%d", max, bodyLen, bufSize)
				assert.Equal(t, src.taken, cr.N())
				if bodyLen > max {
					var tl *httpx.TooLargeError
					require.ErrorAs(t, err, &tl)
					assert.Equal(t, max, tl.Limit)
					assert.ErrorIs(t, err, httpx.ErrTooLarge)
					assert.Len(t, got, int(max))
					// The error sticks.
					n, err2 := cr.Read(make([]byte, 10))
					assert.Zero(t, n)
					assert.ErrorIs(t, err2, httpx.ErrTooLarge)
				} else {
					require.NoError(t, err)
					assert.Len(t, got, int(bodyLen))
				}
			}
		}
	}
}

// A JSON decoder over a large body reads exactly the cap, not its own
// buffer's worth past it.
func TestCappedReaderUnderJSONDecoder(t *testing.T) {
	const max = 1 << 20
	body := `{"result":"` + strings.Repeat("a", 2<<20) + `"}`
	src := &countingReader{src: strings.NewReader(body)}
	var v map[string]string
	err := json.NewDecoder(httpx.NewCappedReader(src, max)).Decode(&v)
	require.ErrorIs(t, err, httpx.ErrTooLarge)
	assert.Equal(t, int64(max+1), src.taken)
}

func TestReadAll(t *testing.T) {
	b, err := httpx.ReadAll(strings.NewReader("hello"), 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))

	src := &countingReader{src: strings.NewReader(strings.Repeat("z", 1<<20))}
	b, err = httpx.ReadAll(src, 10)
	assert.ErrorIs(t, err, httpx.ErrTooLarge)
	assert.Equal(t, strings.Repeat("z", 10), string(b))
	assert.Equal(t, int64(11), src.taken)

	b, err = httpx.ReadAll(strings.NewReader("x"), -1)
	assert.ErrorIs(t, err, httpx.ErrTooLarge)
	assert.Empty(t, b)

	boom := errors.New("boom")
	_, err = httpx.ReadAll(io.MultiReader(strings.NewReader("ab"), iotest{boom}), 10)
	assert.ErrorIs(t, err, boom)
}

// A CappedReader stands in for a response body.
var _ io.ReadCloser = (*httpx.CappedReader)(nil)

type iotest struct{ err error }

func (r iotest) Read([]byte) (int, error) { return 0, r.err }

func TestCappedReaderClose(t *testing.T) {
	rc := &closer{Reader: strings.NewReader("x")}
	cr := httpx.NewCappedReader(rc, 4)
	require.NoError(t, cr.Close())
	assert.True(t, rc.closed)
	assert.NoError(t, httpx.NewCappedReader(strings.NewReader(""), 1).Close())
}

type closer struct {
	io.Reader
	closed bool
}

func (c *closer) Close() error { c.closed = true; return nil }

func TestExcerpt(t *testing.T) {
	cases := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"trailing newline trimmed", "not found\n", 100, "not found"},
		{"surrounding space", "  \t x \r\n", 100, "x"},
		{"cut with ellipsis", "abcdefgh", 4, "abcd…"},
		{"cut on rune boundary", "ab€cd", 4, "ab…"},
		{"invalid utf8 replaced", "a\xffb", 10, "a\uFFFDb"},
		{"control chars", "a\nb\x00c", 10, "a b c"},
		{"exact fit", "abcd", 4, "abcd"},
		{"zero max", "abcd", 0, ""},
		{"empty", "", 10, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, httpx.Excerpt([]byte(c.in), c.max))
		})
	}
}

func TestStatusText(t *testing.T) {
	assert.Equal(t, "n8n: HTTP 404 Not Found: nope", httpx.StatusText("n8n", 404, []byte("nope\n")))
	assert.Equal(t, "mcpclient: HTTP 500 Internal Server Error", httpx.StatusText("mcpclient", 500, nil))
	assert.Equal(t, "x: HTTP 599", httpx.StatusText("x", 599, []byte("  ")))
	long := httpx.StatusText("x", 502, bytes.Repeat([]byte("é"), 1000))
	assert.True(t, strings.HasSuffix(long, "…"))
	assert.LessOrEqual(t, len(long), len("x: HTTP 502 Bad Gateway: ")+httpx.ExcerptBytes+len("…"))
}

func TestNoRedirectClient(t *testing.T) {
	var followed bool
	mux := http.NewServeMux()
	mux.HandleFunc("/from", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/to", http.StatusFound)
	})
	mux.HandleFunc("/to", func(http.ResponseWriter, *http.Request) { followed = true })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	base := &http.Client{Timeout: 7 * time.Second}
	c := httpx.NoRedirectClient(base)
	require.NotSame(t, base, c)
	assert.Nil(t, base.CheckRedirect, "base is not modified")
	assert.Equal(t, 7*time.Second, c.Timeout)

	resp, err := c.Get(srv.URL + "/from")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusFound, resp.StatusCode)
	assert.Equal(t, "/to", resp.Header.Get("Location"))
	assert.False(t, followed)

	resp, err = httpx.NoRedirectClient(nil).Get(srv.URL + "/from")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusFound, resp.StatusCode)
}

func TestWithRootCAs(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/from" {
			http.Redirect(w, r, "/to", http.StatusFound)
		}
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())

	// Without the roots the server is not trusted.
	_, err := httpx.NoRedirectClient(nil).Get(srv.URL)
	require.Error(t, err)

	base := &http.Client{Timeout: 9 * time.Second}
	a, err := httpx.WithRootCAs(httpx.NoRedirectClient(base), pool)
	require.NoError(t, err)
	b0, err := httpx.WithRootCAs(base, pool)
	require.NoError(t, err)
	b := httpx.NoRedirectClient(b0)
	for name, c := range map[string]*http.Client{"roots after no-redirect": a, "roots before no-redirect": b} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, 9*time.Second, c.Timeout)
			resp, err := c.Get(srv.URL + "/from")
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusFound, resp.StatusCode)
		})
	}
	assert.Nil(t, base.Transport, "base is not modified")

	_, err = httpx.WithRootCAs(&http.Client{Transport: roundTripFunc(nil)}, pool)
	assert.Error(t, err)
	_, err = httpx.WithRootCAs(nil, nil)
	assert.Error(t, err)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestStripURL(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:1/webhook/s3cret-path?token=abc", nil)
	require.NoError(t, err)
	_, doErr := http.DefaultClient.Do(req)
	require.Error(t, doErr)
	require.Contains(t, doErr.Error(), "s3cret-path")

	err = httpx.StripURL(doErr)
	assert.NotContains(t, err.Error(), "s3cret-path")
	assert.NotContains(t, err.Error(), "token=abc")
	assert.Equal(t, "Post: context canceled", err.Error())
	assert.ErrorIs(t, err, context.Canceled)

	timeout := &url.Error{Op: "Get", URL: "http://h/secret", Err: &net.DNSError{Err: "x", IsTimeout: true}}
	err = httpx.StripURL(timeout)
	var dns *net.DNSError
	assert.ErrorAs(t, err, &dns)
	te, ok := err.(interface{ Timeout() bool })
	require.True(t, ok)
	assert.True(t, te.Timeout())

	plain := errors.New("plain")
	assert.Same(t, plain, httpx.StripURL(plain))
	assert.NoError(t, httpx.StripURL(nil))
}

func TestIsLoopback(t *testing.T) {
	yes := []string{"localhost", "LOCALHOST", "localhost:8080", "127.0.0.1", "127.1.2.3:99", "::1", "[::1]", "[::1]:443", "::ffff:127.0.0.1"}
	no := []string{"", "example.com", "10.0.0.1", "localhost.example.com", "127.0.0.1.nip.io", "[::2]:80", "0.0.0.0", "::"}
	for _, h := range yes {
		assert.True(t, httpx.IsLoopback(h), h)
	}
	for _, h := range no {
		assert.False(t, httpx.IsLoopback(h), h)
	}
}
