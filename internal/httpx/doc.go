// Package httpx holds the HTTP plumbing every candor client shares: a client
// clone that never follows redirects, a clone that verifies TLS with given
// roots, exact caps on bodies read from a peer, the one Error() format for a
// status error, error values without URLs, and the loopback check that
// decides where plain http is allowed.
//
// # Redirects
//
// NoRedirectClient returns a clone of a client whose redirects come back as
// the 3xx response itself: a bearer token or a POST body is never replayed
// to another place. WithRootCAs clones the transport and sets its roots;
// the two compose in either order and keep the base client's Timeout.
//
// # Exact caps
//
// ReadAll and CappedReader never take more than max+1 bytes from the
// source, whatever buffer size the caller reads with: the byte past max is
// how they know the body is too large. Both report it as a *TooLargeError
// (errors.Is(err, ErrTooLarge)); the bytes up to max are still returned.
//
// # Failure taxonomy
//
//   - ErrTooLarge / *TooLargeError{Limit}: the body had more than Limit
//     bytes; what was read is bounded by Limit.
//   - WithRootCAs returns an error when the base transport is not an
//     *http.Transport (its TLS configuration cannot be reached) or the pool
//     is nil.
//   - StripURL keeps the cause of a *url.Error (errors.Is and errors.As reach
//     it, and Timeout is kept) and drops the URL, which may carry a secret
//     path or query.
package httpx
