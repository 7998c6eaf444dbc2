package oidctest

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// loginPath is the provider's login page, where the authorization
// endpoint sends the user agent.
const loginPath = "/login"

// maxLoginBody bounds a login form and, in ApproveAuthorization, each page
// read.
const maxLoginBody = 64 << 10

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<title>oidctest login</title>
<form method="post" action="/login">
<input type="hidden" name="authRequestID" value="{{.}}">
<label>User <input name="username"></label>
<button type="submit">Log in</button>
<button type="submit" name="deny" value="1">Deny</button>
</form>
`))

// login serves the login page (GET) and its form (POST): username logs
// that user in and approves the request, deny refuses it (the client
// receives error=access_denied).
func (p *Provider) login(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = loginPage.Execute(w, r.URL.Query().Get("authRequestID"))
		return
	case http.MethodPost:
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "malformed login form", http.StatusBadRequest)
		return
	}
	ctx := op.ContextWithIssuer(r.Context(), p.issuer)
	id := r.PostForm.Get("authRequestID")
	authReq, err := p.st.AuthRequestByID(ctx, id)
	if err != nil {
		http.Error(w, "unknown authorization request", http.StatusBadRequest)
		return
	}
	if r.PostForm.Get("deny") != "" {
		op.AuthRequestError(w, r.WithContext(ctx), authReq, oidc.ErrAccessDenied().WithDescription("The user denied the request"), p.provider)
		return
	}
	if err := p.st.approve(id, r.PostForm.Get("username")); err != nil {
		http.Error(w, "login failed: "+err.Error(), http.StatusUnauthorized)
		return
	}
	http.Redirect(w, r, op.AuthCallbackURL(p.provider)(ctx, id), http.StatusFound)
}

// ApproveAuthorization plays the user agent of userID in the authorization
// code flow: it opens authURL (an authorization request to this provider),
// logs userID in at the login page, and returns the URL the provider then
// redirects to: the client's redirect URI with code and state, or with
// error when the provider refused the request. That URL is not opened. It
// is what a test's login function (the browser step) returns.
func (p *Provider) ApproveAuthorization(ctx context.Context, authURL, userID string) (string, error) {
	return p.browse(ctx, authURL, url.Values{"username": {userID}})
}

// DenyAuthorization is ApproveAuthorization for a user who refuses: the
// URL returned carries error=access_denied.
func (p *Provider) DenyAuthorization(ctx context.Context, authURL string) (string, error) {
	return p.browse(ctx, authURL, url.Values{"deny": {"1"}})
}

// browse follows the provider's redirects from authURL, submits form at
// the login page, and returns the first redirect that leaves the provider.
func (p *Provider) browse(ctx context.Context, authURL string, form url.Values) (string, error) {
	if !strings.HasPrefix(authURL, p.issuer+"/") {
		return "", errors.New("oidctest: the authorization URL is not this provider's")
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next, method, submitted := authURL, http.MethodGet, false
	for range 8 {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequestWithContext(ctx, method, next, body)
		if err != nil {
			return "", fmt.Errorf("oidctest: %w", err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", fmt.Errorf("oidctest: %w", err)
		}
		page, _ := io.ReadAll(io.LimitReader(resp.Body, maxLoginBody))
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusFound || resp.StatusCode == http.StatusSeeOther:
			loc, err := resp.Location()
			if err != nil {
				return "", fmt.Errorf("oidctest: redirect without location: %w", err)
			}
			if !strings.HasPrefix(loc.String(), p.issuer+"/") {
				return loc.String(), nil
			}
			next, method = loc.String(), http.MethodGet
		case resp.StatusCode == http.StatusOK && req.URL.Path == loginPath && method == http.MethodGet && !submitted:
			form = cloneValues(form)
			form.Set("authRequestID", req.URL.Query().Get("authRequestID"))
			next, method, submitted = p.issuer+loginPath, http.MethodPost, true
		default:
			return "", fmt.Errorf("oidctest: %s %s answered %d: %.200s", method, req.URL.Path, resp.StatusCode, page)
		}
	}
	return "", errors.New("oidctest: too many redirects")
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
