package mandate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/mandate"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// The unattended flow's refusals: without a mandate the agent does nothing,
// and that is decided before any request to the provider (the token URL
// below is never contacted). A mandate the person revoked is refused the
// same way.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mandates")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	// The key comes from the environment in a real deployment.
	key, err := mandate.ParseKey("ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8=")
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := mandate.Open(ctx, filepath.Join(dir, "mandates.db"),
		mandate.WithKey(key),
		mandate.WithAgent("agent", &tokenexchange.Config{
			TokenURL:     "https://idp.example.com/realms/shop/protocol/openid-connect/token",
			ClientID:     "agent",
			ClientSecret: "agent-secret",
			Audience:     []string{"mcp-server"},
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	fmt.Println(store)

	_, err = store.Token(ctx, "alice", "agent")
	fmt.Println(mandate.Classify(err), errors.Is(err, mandate.ErrNoMandate))

	// The person grants the agent their offline refresh token, then
	// revokes it (in the store only: this Config has no RevocationURL).
	if err := store.Grant(ctx, "alice", "agent", "alice's-offline-refresh-token"); err != nil {
		fmt.Println(err)
		return
	}
	if err := store.Revoke(ctx, "alice", "agent"); err != nil {
		fmt.Println(err)
		return
	}
	_, err = store.Token(ctx, "alice", "agent")
	fmt.Println(mandate.Classify(err), errors.Is(err, mandate.ErrNoMandate))
	fmt.Println(err)

	_, err = store.Token(ctx, "alice", "billing-agent")
	fmt.Println(mandate.Classify(err), errors.Is(err, mandate.ErrNoMandate))
	// Output:
	// mandate.Store{agents=["agent"]}
	// no_mandate true
	// mandate_revoked true
	// mandate of user "alice" for agent "agent": revoked
	// unknown_agent false
}

// The unattended flow, against an in-process OpenID provider: the person
// granted the agent a mandate (their offline refresh token, sealed at
// rest); at 06:00 the agent redeems it for a token scoped to the tool
// server. Revoke erases it here and at the provider.
func Example_unattended() {
	ctx := context.Background()
	op, err := oidctest.Start(oidctest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer op.Close()
	err = errors.Join(
		op.AddUser(oidctest.User{ID: "alice", Username: "alice"}),
		op.AddClient(oidctest.Client{ID: "agent", Secret: "agent-secret", TokenExchange: true, Audiences: []string{"mcp-server"}}),
		op.AddClient(oidctest.Client{ID: "mcp-server", Secret: "mcp-secret"}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "mandates")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	key, err := mandate.ParseKey("ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8=")
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := mandate.Open(ctx, filepath.Join(dir, "mandates.db"),
		mandate.WithKey(key),
		mandate.WithAgent("agent", &tokenexchange.Config{
			TokenURL: op.TokenURL(), RevocationURL: op.RevocationURL(),
			ClientID: "agent", ClientSecret: "agent-secret", Audience: []string{"mcp-server"},
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	// Alice, logged in at the agent, grants it offline access.
	login, err := op.Login(ctx, "alice", "agent", "offline_access")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := store.Grant(ctx, "alice", "agent", login.RefreshToken); err != nil {
		fmt.Println(err)
		return
	}
	tok, err := store.Token(ctx, "alice", "agent")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sub:", tok.Subject, "azp:", tok.AuthorizedParty, "aud:", tok.Audience)

	if err := store.Revoke(ctx, "alice", "agent"); err != nil {
		fmt.Println(err)
		return
	}
	_, err = store.Token(ctx, "alice", "agent")
	fmt.Println("after revoke:", mandate.Classify(err))
	fmt.Println("refresh tokens still valid at the provider:", op.ActiveRefreshTokens("alice", "agent"))
	// Output:
	// sub: alice azp: agent aud: [mcp-server]
	// after revoke: mandate_revoked
	// refresh tokens still valid at the provider: 0
}

// Two replicas of an agent share one database and redeem the same mandate
// at the same time, against a provider that rotates refresh tokens and
// refuses a used one: the lease in the mandate's row makes them take
// turns, so every redemption succeeds and no refresh token is presented
// twice. (Two stores in one program stand for two processes here; on
// PostgreSQL the replicas may run on different nodes.)
func Example_replicas() {
	ctx := context.Background()
	op, err := oidctest.Start(oidctest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer op.Close()
	err = errors.Join(
		op.AddUser(oidctest.User{ID: "alice", Username: "alice"}),
		op.AddClient(oidctest.Client{ID: "agent", Secret: "agent-secret", TokenExchange: true, Audiences: []string{"mcp-server"}}),
		op.AddClient(oidctest.Client{ID: "mcp-server", Secret: "mcp-secret"}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "mandates")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	key, err := mandate.ParseKey("ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8=")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := &tokenexchange.Config{TokenURL: op.TokenURL(), ClientID: "agent", ClientSecret: "agent-secret", Audience: []string{"mcp-server"}}
	var replicas []*mandate.Store
	for range 2 {
		s, err := mandate.Open(ctx, filepath.Join(dir, "mandates.db"),
			mandate.WithKey(key), mandate.WithAgent("agent", cfg), mandate.WithLease(10*time.Second))
		if err != nil {
			fmt.Println(err)
			return
		}
		defer s.Close()
		replicas = append(replicas, s)
	}
	offline, err := op.OfflineToken(ctx, "alice", "agent")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := replicas[0].Grant(ctx, "alice", "agent", offline); err != nil {
		fmt.Println(err)
		return
	}

	var wg sync.WaitGroup
	var failed atomic.Int32
	for _, s := range replicas {
		for range 3 {
			wg.Go(func() {
				if _, err := s.Token(ctx, "alice", "agent"); err != nil {
					failed.Add(1)
				}
			})
		}
	}
	wg.Wait()
	fmt.Println("refreshes:", op.RefreshGrants(), "failed:", failed.Load())
	fmt.Println("refresh tokens presented twice:", op.RefreshTokenReuses())
	// Output:
	// refreshes: 6 failed: 0
	// refresh tokens presented twice: 0
}

// On PostgreSQL the store uses the application's *sql.DB (driver "pgx")
// and keeps its tables under a schema of its own; every node that opens
// the same database shares the mandates and takes turns redeeming each.
func Example_postgres() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("MANDATES_DSN")) // postgres://…
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	key, err := mandate.ParseKey(os.Getenv("MANDATE_KEY"))
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := mandate.OpenDB(ctx, db,
		mandate.WithKey(key),
		mandate.WithSchema("agent_mandates"),
		mandate.WithLease(30*time.Second),
		mandate.WithAgent("agent", &tokenexchange.Config{
			TokenURL:     "https://idp.example.com/realms/shop/protocol/openid-connect/token",
			ClientID:     "agent",
			ClientSecret: os.Getenv("AGENT_SECRET"),
			Audience:     []string{"mcp-server"},
		}))
	if err != nil {
		fmt.Println(mandate.Classify(err), err)
		return
	}
	defer store.Close() // leaves db open

	tok, err := store.Token(ctx, "alice", "agent")
	switch mandate.Classify(err) {
	case mandate.KindNone:
		fmt.Println("token for", tok.Audience)
	case mandate.KindStore, mandate.KindLeaseLost:
		fmt.Println("try again later:", err)
	default:
		fmt.Println("no authority:", err)
	}
}
