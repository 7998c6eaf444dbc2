package reorder_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/candorkit/candor/reorder"
)

const secret = "eyJ-secret-refresh-derived-token"

func TestRunnerNoMandateReadsNothing(t *testing.T) {
	storeDown := errors.New("mandate store: database is locked")
	cases := []struct {
		name    string
		src     reorder.MandateFunc
		missing bool
	}{
		{"none granted", func(context.Context) (reorder.Mandate, error) {
			return reorder.Mandate{}, fmt.Errorf("user alice: %w", reorder.ErrNoMandate)
		}, true},
		{"empty token", func(context.Context) (reorder.Mandate, error) {
			return reorder.Mandate{Subject: "alice"}, nil
		}, true},
		{"source failed", func(context.Context) (reorder.Mandate, error) {
			return reorder.Mandate{}, storeDown
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := &memCatalog{items: loadFixture(t)}
			opened := 0
			r, err := reorder.NewRunner(c.src, func(context.Context, reorder.Mandate) (reorder.Catalog, error) {
				opened++
				return cat, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			p, err := r.Run(context.Background())
			if cat.calls.Load() != 0 || opened != 0 {
				t.Fatalf("catalog read %d times, opened %d times without a mandate", cat.calls.Load(), opened)
			}
			var me *reorder.MandateError
			if !errors.As(err, &me) || errors.Is(err, reorder.ErrNoMandate) != c.missing {
				t.Fatalf("err = %v", err)
			}
			if !c.missing && !errors.Is(err, storeDown) {
				t.Fatalf("source error lost: %v", err)
			}
			if p.Complete || !p.Escalate || p.Scanned != 0 || len(p.Lines) != 0 || !strings.Contains(p.Reasons[0], "halted before any read") {
				t.Fatalf("proposal %+v", p)
			}
		})
	}
}

func TestRunnerWithMandate(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	src := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
		return reorder.Mandate{Subject: "alice", Token: secret}, nil
	})
	var gotToken string
	cat := &memCatalog{items: loadFixture(t)}
	r, err := reorder.NewRunner(src, func(_ context.Context, m reorder.Mandate) (reorder.Catalog, error) {
		gotToken = m.Token
		return cat, nil
	}, reorder.WithPolicy(reorder.Policy{PageSize: 50}), reorder.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Run(context.Background())
	if err != nil || !p.Complete || len(p.Lines) != 1 || p.Lines[0] != bsa || cat.calls.Load() != 3 {
		t.Fatalf("got %+v, %v, %d calls", p, err, cat.calls.Load())
	}
	if gotToken != secret {
		t.Fatal("opener did not receive the mandate's token")
	}
	if strings.Contains(logs.String(), secret) || !strings.Contains(logs.String(), `"subject":"alice"`) {
		t.Fatalf("logs:\n%s", logs.String())
	}
}

func TestRunnerOpenFails(t *testing.T) {
	refused := errors.New("token exchange refused: invalid_grant")
	src := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
		return reorder.Mandate{Subject: "alice", Token: secret}, nil
	})
	r, _ := reorder.NewRunner(src, func(context.Context, reorder.Mandate) (reorder.Catalog, error) { return nil, refused })
	p, err := r.Run(context.Background())
	if !errors.Is(err, refused) || p.Complete || !p.Escalate {
		t.Fatalf("got %+v, %v", p, err)
	}
	r, _ = reorder.NewRunner(src, func(context.Context, reorder.Mandate) (reorder.Catalog, error) { return nil, nil })
	if _, err := r.Run(context.Background()); !errors.Is(err, reorder.ErrNilCatalog) {
		t.Fatalf("nil catalog from opener: %v", err)
	}
}

func TestNewRunnerRejects(t *testing.T) {
	src := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) { return reorder.Mandate{}, nil })
	open := func(context.Context, reorder.Mandate) (reorder.Catalog, error) { return nil, nil }
	if _, err := reorder.NewRunner(nil, open); err == nil {
		t.Error("nil source accepted")
	}
	if _, err := reorder.NewRunner(src, nil); err == nil {
		t.Error("nil opener accepted")
	}
	var pe *reorder.PolicyError
	if _, err := reorder.NewRunner(src, open, reorder.WithPolicy(reorder.Policy{OrderUpTo: 10})); !errors.As(err, &pe) {
		t.Errorf("bad policy: %v", err)
	}
}

func TestMandateNeverShowsToken(t *testing.T) {
	m := reorder.Mandate{Subject: "alice", Token: secret}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "m", m)
	j, _ := json.Marshal(m)
	for _, s := range []string{fmt.Sprint(m), fmt.Sprintf("%v %+v %#v %s", m, m, m, m), fmt.Sprintf("%v", &m), buf.String(), string(j)} {
		if strings.Contains(s, secret) {
			t.Fatalf("token leaked: %s", s)
		}
		if !strings.Contains(s, "alice") {
			t.Fatalf("subject missing: %s", s)
		}
	}
	if !json.Valid(j) {
		t.Fatalf("invalid JSON %s", j)
	}
}
