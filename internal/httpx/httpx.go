package httpx

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// NoRedirectClient returns a clone of base (nil means a new client over
// http.DefaultTransport) that does not follow redirects: a 3xx answer is
// returned to the caller as the response, with its body unread.
func NoRedirectClient(base *http.Client) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	}
	c.CheckRedirect = refuseRedirect
	return &c
}

func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// WithRootCAs returns a clone of base (nil means a new client) whose
// transport is a clone of base's *http.Transport (http.DefaultTransport when
// base has none) verifying servers with pool. Timeout, CheckRedirect and Jar
// are kept, so WithRootCAs and NoRedirectClient compose in either order.
// A transport that is not an *http.Transport cannot be given roots: that is
// an error, never a silent fallback.
func WithRootCAs(base *http.Client, pool *x509.CertPool) (*http.Client, error) {
	if pool == nil {
		return nil, errors.New("httpx: root CA pool is nil")
	}
	var c http.Client
	if base != nil {
		c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	t, ok := rt.(*http.Transport)
	if !ok {
		return nil, fmt.Errorf("httpx: cannot set root CAs on a %T transport (an *http.Transport is needed)", rt)
	}
	t = t.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	t.TLSClientConfig.RootCAs = pool
	c.Transport = t
	return &c, nil
}

// ErrTooLarge matches every *TooLargeError.
var ErrTooLarge = errors.New("httpx: body too large")

// TooLargeError reports a body with more than Limit bytes.
type TooLargeError struct {
	// Limit is the cap that was exceeded, in bytes.
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("httpx: body larger than %d bytes", e.Limit)
}

// Is matches ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// ReadAll reads r to its end, taking at most max+1 bytes from it. A body of
// more than max bytes returns the first max bytes and a *TooLargeError.
// A negative max is treated as 0.
func ReadAll(r io.Reader, max int64) ([]byte, error) {
	cr := NewCappedReader(r, max)
	var buf bytes.Buffer
	_, err := buf.ReadFrom(cr)
	return buf.Bytes(), err
}

// CappedReader reads from an underlying reader and fails once more than its
// limit has been read. It never asks the source for more than limit+1 bytes
// in total, whatever the size of the buffers passed to Read, so a streaming
// decoder over it reads exactly the cap and no more.
type CappedReader struct {
	r   io.Reader
	max int64
	n   int64
	err error
}

// NewCappedReader returns a reader over r capped at max bytes (a negative
// max is treated as 0).
func NewCappedReader(r io.Reader, max int64) *CappedReader {
	if max < 0 {
		max = 0
	}
	return &CappedReader{r: r, max: max}
}

// Read reads into p. Once the source has yielded more than the limit, Read
// returns the bytes up to the limit and a *TooLargeError, and every later
// call returns the same error.
func (c *CappedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	room := c.max + 1 - c.n // >= 1 while no error has been seen
	if int64(len(p)) > room {
		p = p[:room]
	}
	k, err := c.r.Read(p)
	c.n += int64(k)
	if c.n > c.max {
		c.err = &TooLargeError{Limit: c.max}
		return k - int(c.n-c.max), c.err
	}
	if err != nil {
		c.err = err
	}
	return k, err
}

// N returns the number of bytes taken from the source so far (at most the
// limit plus one).
func (c *CappedReader) N() int64 { return c.n }

// Close closes the source when it is an io.Closer, so a CappedReader can
// stand in for an http.Response.Body.
func (c *CappedReader) Close() error {
	if rc, ok := c.r.(io.Closer); ok {
		return rc.Close()
	}
	return nil
}

// Excerpt returns a short, printable excerpt of a body for an error message:
// surrounding white space trimmed, invalid UTF-8 replaced by U+FFFD, control
// characters turned into spaces, and, when longer than max bytes, cut on a
// rune boundary with "…" appended. max <= 0 gives "".
func Excerpt(b []byte, max int) string {
	if max <= 0 {
		return ""
	}
	s := strings.ToValidUTF8(string(bytes.TrimSpace(b)), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}

// ExcerptBytes is the length, in bytes, of the body excerpt StatusText
// quotes.
const ExcerptBytes = 200

// StatusText is the one Error() text of a status error:
// "pkg: HTTP 404 Not Found: <excerpt>", with at most ExcerptBytes of the
// body (see Excerpt) and no excerpt part when the body is empty. The caller
// redacts the body before passing it.
func StatusText(pkg string, code int, body []byte) string {
	var b strings.Builder
	if pkg != "" {
		b.WriteString(pkg)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "HTTP %d", code)
	if t := http.StatusText(code); t != "" {
		b.WriteString(" ")
		b.WriteString(t)
	}
	if ex := Excerpt(body, ExcerptBytes); ex != "" {
		b.WriteString(": ")
		b.WriteString(ex)
	}
	return b.String()
}

// StripURL returns err without the URL a *url.Error carries: its text is
// "Op: cause" (for example "Post: context deadline exceeded"), and Unwrap,
// errors.Is, errors.As and Timeout reach the cause. Any other error,
// including one that merely wraps a *url.Error, is returned unchanged, so
// call it on the error straight from http.Client.Do.
func StripURL(err error) error {
	ue, ok := err.(*url.Error)
	if !ok || ue == nil {
		return err
	}
	return &noURLError{op: ue.Op, err: ue.Err}
}

type noURLError struct {
	op  string
	err error
}

func (e *noURLError) Error() string {
	if e.err == nil {
		return e.op
	}
	return e.op + ": " + e.err.Error()
}

func (e *noURLError) Unwrap() error { return e.err }

// Timeout reports whether the cause is a timeout, as *url.Error does.
func (e *noURLError) Timeout() bool {
	t, ok := e.err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}

// IsLoopback reports whether host (a host name or address, with or without a
// port, IPv6 in brackets or not) is "localhost" or a loopback address
// (127.0.0.0/8, ::1). Other names are not resolved: a name that merely
// resolves to a loopback address is not loopback here.
func IsLoopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
