package tokenexchange

import "crypto/sha256"

// Waiters reports how many callers wait on the in-flight exchange for
// subjectToken (tests only).
func (c *Cache) Waiters(subjectToken string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[sha256.Sum256([]byte(subjectToken))]
	if e == nil || e.flight == nil {
		return 0
	}
	return e.flight.waiters
}

// ParseTokenResponse exposes the response parser to the fuzz target.
func ParseTokenResponse(status int, body []byte, wantIssued string, secrets []string) (*Token, error) {
	p, err := parseTokenResponse("exchange", status, body, wantIssued, secrets)
	if err != nil {
		return nil, err
	}
	return p.token(), nil
}
