package tokenexchange_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/candorkit/candor/tokenexchange"
)

func FuzzParseTokenResponse(f *testing.F) {
	at := tokenexchange.TokenTypeAccessToken
	f.Add(200, []byte(`{"access_token":"eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImF6cCI6ImFnZW50IiwiYXVkIjpbIm1jcCJdLCJzY29wZSI6ImEgYiIsImV4cCI6MTk5OTk5OTk5OX0.sig","issued_token_type":"`+at+`","token_type":"Bearer","expires_in":300,"scope":"a b"}`))
	f.Add(200, []byte(`{"access_token":"opaque-token-value","token_type":"Bearer","expires_in":"60"}`))
	f.Add(200, []byte(`{"access_token":"opaque-token-value","issued_token_type":"`+at+`","token_type":"N_A"}`))
	f.Add(200, []byte(`{"error":"invalid_request","error_description":"opaque-token-value"}`))
	f.Add(200, []byte(`{"access_token":12,"issued_token_type":"x","token_type":"Bearer"}`))
	f.Add(200, []byte(`{"access_token":"opaque-token-value","issued_token_type":"`+at+`","token_type":"bearer","expires_in":-5}`))
	f.Add(200, []byte(`{"access_token":"a.b.c","issued_token_type":"`+at+`","token_type":"Bearer","expires_in":1e99}`))
	f.Add(200, []byte(`[] trailing`))
	f.Add(200, []byte(``))
	f.Add(201, []byte(`{"access_token":"opaque-token-value","issued_token_type":"`+at+`","token_type":"Bearer"} {}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		tok, err := tokenexchange.ParseTokenResponse(status, body, at, nil)
		if (tok == nil) == (err == nil) {
			t.Fatalf("token %v with error %v: exactly one must be set", tok, err)
		}
		if err == nil {
			if tok.AccessToken == "" || tok.TokenType == "" || tok.IssuedTokenType != at {
				t.Fatalf("accepted an incomplete response: %q", body)
			}
			_ = tok.String()
			return
		}
		var re *tokenexchange.ResponseError
		var oe *tokenexchange.StatusError
		if !errors.As(err, &re) && !errors.As(err, &oe) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		var probe struct {
			AccessToken string `json:"access_token"`
		}
		if json.Unmarshal(body, &probe) == nil && len(probe.AccessToken) >= 8 {
			rendered := err.Error() + fmt.Sprintf("%+v %#v", err, err)
			if re != nil {
				rendered += string(re.Body)
			}
			if strings.Contains(rendered, probe.AccessToken) {
				t.Fatalf("error or evidence shows the access token: %q", rendered)
			}
		}
	})
}
