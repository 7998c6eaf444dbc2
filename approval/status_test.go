package approval

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStatusValid: the four statuses are valid, anything else is not (a
// status read from a foreign or damaged row must not pass for one of them).
func TestStatusValid(t *testing.T) {
	for _, s := range []Status{StatusWaiting, StatusApproved, StatusRejected, StatusCompleted} {
		assert.True(t, s.Valid(), "%q", s)
	}
	for _, s := range []Status{"", "Waiting", "applied", "completed "} {
		assert.False(t, s.Valid(), "%q", s)
	}
}
