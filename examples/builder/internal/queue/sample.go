package queue

import (
	"context"
	"database/sql"
	"strings"
)

// CaptureBasePlaceholder in an idea's infrastructure text stands for the base
// URL of the builder's capture endpoint; ExpandInfrastructure fills it in.
const CaptureBasePlaceholder = "{capture_base}"

// ExpandInfrastructure replaces CaptureBasePlaceholder with the capture
// endpoint's base URL (no trailing slash).
func ExpandInfrastructure(text, captureBase string) string {
	return strings.ReplaceAll(text, CaptureBasePlaceholder, strings.TrimRight(captureBase, "/"))
}

// Sample is the idea `builder init -sample` inserts: a webhook that confirms
// an order by calling a capture endpoint, with an assertion that checks both
// the recorded call (http) and the row it left in http_captures (sql).
func Sample() NewIdea {
	return NewIdea{
		Name:     "Order confirmation relay",
		Priority: sql.NullInt64{Int64: 1, Valid: true},
		Spec: "When a POST arrives on the webhook path order-received with a JSON body {order_id, email}, " +
			"send an HTTP POST with the JSON body {\"order_id\": <order_id>, \"status\": \"confirmed\"} to the " +
			"order confirmation endpoint, then answer the webhook caller with {\"ok\": true}.",
		Infrastructure: "Order confirmation endpoint: POST " + CaptureBasePlaceholder + "/capture/order-confirmations " +
			"(accepts JSON, answers 200). No credentials are needed for it.",
		Assertion: &Assertion{
			SQL:  []SQLCheck{{Query: "SELECT 1 FROM http_captures WHERE capture = 'order-confirmations' AND body LIKE '%confirmed%'"}},
			HTTP: []HTTPCheck{{Capture: "order-confirmations", Method: "POST", BodyContains: "confirmed"}},
			Trigger: []map[string]any{{
				"headers": map[string]any{"content-type": "application/json"},
				"params":  map[string]any{},
				"query":   map[string]any{},
				"body":    map[string]any{"order_id": 1001, "email": "buyer@shop.test"},
			}},
		},
	}
}

// InsertSample inserts Sample and returns its id.
func (s *Store) InsertSample(ctx context.Context) (int64, error) {
	return s.InsertIdea(ctx, Sample())
}
