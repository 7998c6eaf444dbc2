package mandate_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pgxdriver "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/pgtest"
	"github.com/candorkit/candor/internal/testproc"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/mandate"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// backend is where a test keeps its mandates: a SQLite file, or a database
// of a throwaway PostgreSQL cluster.
type backend struct {
	name    string
	cluster *pgtest.Cluster // nil for SQLite
}

// newDSN returns a fresh database: a file path for SQLite, a DSN for
// PostgreSQL.
func (b backend) newDSN(t testing.TB) string {
	if b.cluster == nil {
		return filepath.Join(t.TempDir(), "mandates.db")
	}
	return b.cluster.NewDatabase(t)
}

// openStore opens a store on dsn as the backend's users would: Open for a
// SQLite file, OpenDB over a pgx *sql.DB for PostgreSQL.
func openStore(ctx context.Context, backendName, dsn string, opts ...mandate.Option) (*mandate.Store, func(), error) {
	if backendName == "sqlite" {
		s, err := mandate.Open(ctx, dsn, opts...)
		if err != nil {
			return nil, nil, err
		}
		return s, func() { _ = s.Close() }, nil
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, nil, err
	}
	s, err := mandate.OpenDB(ctx, db, opts...)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return s, func() { _ = s.Close(); _ = db.Close() }, nil
}

func (b backend) open(t testing.TB, dsn string, opts ...mandate.Option) *mandate.Store {
	t.Helper()
	s, closeFn, err := openStore(context.Background(), b.name, dsn, opts...)
	require.NoError(t, err)
	t.Cleanup(closeFn)
	return s
}

// TestSQLite and TestPostgres run the cross-process suites on each backend.
func TestSQLite(t *testing.T) {
	runReplicaSuites(t, backend{name: "sqlite"})
}

func TestPostgres(t *testing.T) {
	b := backend{name: "postgres", cluster: pgtest.Start(t)}
	runReplicaSuites(t, b)
	t.Run("Basics", func(t *testing.T) { testPostgresBasics(t, b) })
	t.Run("Schema", func(t *testing.T) { testPostgresSchema(t, b) })
	t.Run("ServerStopped", func(t *testing.T) { testServerStopped(t, b) })
}

func runReplicaSuites(t *testing.T, b backend) {
	t.Run("ConcurrentProcesses", func(t *testing.T) { testConcurrentProcesses(t, b) })
	t.Run("KilledHolder", func(t *testing.T) { testKilledHolder(t, b) })
	t.Run("Fencing", func(t *testing.T) { testFencing(t, b) })
	t.Run("InProcessLockOnly", func(t *testing.T) { testInProcessLockOnly(t, b) })
	t.Run("WaitEndsWithContext", func(t *testing.T) { testWaitEndsWithContext(t, b) })
	t.Run("GrantEndsLease", func(t *testing.T) { testGrantEndsLease(t, b) })
}

// A new grant from another process ends the lease of a redemption in
// flight: the holder notices when it renews, abandons its request before
// the provider acts on it (lease_lost), and the new mandate is untouched.
func testGrantEndsLease(t *testing.T, b backend) {
	ctx := context.Background()
	f := newFixture(t, oidctest.Options{})
	dsn := b.newDSN(t)
	key := newKey(t)
	opts := []mandate.Option{mandate.WithKey(key), mandate.WithAgent(agentClient, f.config()),
		mandate.WithLease(300 * time.Millisecond), mandate.WithLogger(f.logger)}
	holder, admin := b.open(t, dsn, opts...), b.open(t, dsn, opts...)
	grantAlice(t, f, holder)
	arrived := make(chan struct{})
	var first atomic.Bool
	f.op.HoldRefreshes(func(ctx context.Context) error {
		if first.CompareAndSwap(false, true) {
			close(arrived)
			<-ctx.Done() // until the holder abandons the request
			return ctx.Err()
		}
		return nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := holder.Token(ctx, alice, agentClient)
		done <- err
	}()
	<-arrived
	grantAlice(t, f, admin)
	granted := sealedRow(t, admin)
	err := <-done
	f.record(err)
	assert.Equal(t, mandate.KindLeaseLost, mandate.Classify(err), "%v", err)
	assert.ErrorIs(t, err, mandate.ErrLeaseLost)
	assert.Zero(t, f.op.RefreshGrants(), "the provider acted on the abandoned request")
	assert.Equal(t, granted, sealedRow(t, admin), "the abandoned redemption touched the new grant")
	tok, err := holder.Token(ctx, alice, agentClient)
	require.NoError(t, f.record(err), "the new grant is redeemable")
	f.trackToken(tok)
}

// A redemption waiting for another holder's lease ends with its context,
// classified as such, and sends nothing.
func testWaitEndsWithContext(t *testing.T, b backend) {
	f := newFixture(t, oidctest.Options{})
	dsn := b.newDSN(t)
	key := newKey(t)
	opts := []mandate.Option{mandate.WithKey(key), mandate.WithAgent(agentClient, f.config())}
	holder, waiter := b.open(t, dsn, opts...), b.open(t, dsn, opts...)
	grantAlice(t, f, holder)
	arrived, release := make(chan struct{}), make(chan struct{})
	f.op.HoldRefreshes(func(context.Context) error {
		close(arrived)
		<-release
		return nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := holder.Token(context.Background(), alice, agentClient)
		done <- err
	}()
	<-arrived
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// The context ends while the waiter polls the held lease (or
		// before it starts): either way it ends the wait.
		cancel()
	}()
	_, err := waiter.Token(ctx, alice, agentClient)
	assert.Equal(t, mandate.Kind(tokenexchange.KindCanceled), mandate.Classify(f.record(err)), "%v", err)
	assert.Equal(t, 0, f.op.RefreshGrants(), "the waiter sent a request")
	close(release)
	require.NoError(t, f.record(<-done))
	assert.Equal(t, 1, f.op.RefreshGrants())
}

// The store before leases, for contrast: with only an in-process lock, two
// processes that read the mandate while the first one's refresh is at the
// provider both present the same refresh token, and the rotating provider
// refuses the second: a valid mandate is reported rejected.
func testInProcessLockOnly(t *testing.T, b backend) {
	f := newFixture(t, oidctest.Options{})
	dsn := b.newDSN(t)
	key := newKey(t)
	grantAlice(t, f, b.open(t, dsn, mandate.WithKey(key)))
	second := make(chan struct{})
	var n atomic.Int32
	f.op.HoldRefreshes(func(ctx context.Context) error {
		if n.Add(1) == 1 {
			select {
			case <-second:
			case <-ctx.Done():
			}
			return nil
		}
		close(second)
		return nil
	})
	var hs []*helper
	for range 2 {
		hs = append(hs, startHelper(t, f, b, dsn, key, 1, 10*time.Second, envNoLease+"=1"))
	}
	for _, h := range hs {
		h.go_(t)
	}
	var got []string
	for _, h := range hs {
		got = append(got, h.results(t)...)
	}
	require.Len(t, got, 2)
	rejected := 0
	for _, l := range got {
		if l == "err mandate_rejected" {
			rejected++
		}
	}
	assert.Equal(t, 1, f.op.RefreshTokenReuses(), "results %q", got)
	assert.Equal(t, 1, rejected, "results %q", got)
}

// --- the helper process ---

// Environment of a helper process.
const (
	envHelper  = "MANDATE_TEST_HELPER" // "redeem"
	envBackend = "MANDATE_TEST_BACKEND"
	envDSN     = "MANDATE_TEST_DSN"
	envKey     = "MANDATE_TEST_KEY"
	envToken   = "MANDATE_TEST_TOKEN_URL"
	envSecret  = "MANDATE_TEST_AGENT_SECRET"
	envRounds  = "MANDATE_TEST_ROUNDS"
	envLease   = "MANDATE_TEST_LEASE"
	envNoLease = "MANDATE_TEST_IN_PROCESS_LOCK_ONLY"
)

// TestHelperProcess is not a test: run by the tests below as a separate
// process (the test binary itself), it opens the store named in its
// environment, prints "ready", waits for a line on stdin, then redeems
// alice's mandate the given number of times, printing "ok" or
// "err <kind>" for each.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(envHelper) == "" {
		return
	}
	os.Exit(helperMain())
}

func helperMain() int {
	ctx := context.Background()
	key, err := hex.DecodeString(os.Getenv(envKey))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad key:", err)
		return 3
	}
	rounds, _ := strconv.Atoi(os.Getenv(envRounds))
	lease, err := time.ParseDuration(os.Getenv(envLease))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad lease:", err)
		return 3
	}
	cfg := &tokenexchange.Config{
		TokenURL: os.Getenv(envToken), ClientID: agentClient, ClientSecret: os.Getenv(envSecret),
		Audience: []string{mcpServer},
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	s, closeFn, err := openStore(ctx, os.Getenv(envBackend), os.Getenv(envDSN),
		mandate.WithKey(key), mandate.WithAgent(agentClient, cfg), mandate.WithLease(lease), mandate.WithLogger(logger))
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 3
	}
	defer closeFn()
	if os.Getenv(envNoLease) != "" {
		s.InProcessLockOnly()
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, "no start signal:", err)
		return 3
	}
	for range rounds {
		start := time.Now()
		_, err := s.Token(ctx, alice, agentClient)
		if err != nil {
			fmt.Printf("err %s\n", mandate.Classify(err))
			fmt.Fprintln(os.Stderr, "token:", err)
			continue
		}
		fmt.Printf("ok %d\n", time.Since(start).Milliseconds())
	}
	return 0
}

// helper is a running helper process.
type helper struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, line by line; closed at EOF
	stderr *testproc.Buffer
}

// startHelper runs the test binary as a helper process redeeming rounds
// times against f's provider on b's database dsn, and waits for its
// "ready".
func startHelper(t *testing.T, f *fixture, b backend, dsn string, key []byte, rounds int, lease time.Duration, env ...string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		envHelper+"=redeem", envBackend+"="+b.name, envDSN+"="+dsn, envKey+"="+hex.EncodeToString(key),
		envToken+"="+f.op.TokenURL(), envSecret+"="+f.agentSecret,
		envRounds+"="+strconv.Itoa(rounds), envLease+"="+lease.String())
	cmd.Env = append(cmd.Env, env...)
	h := &helper{cmd: cmd, lines: make(chan string, 64), stderr: &testproc.Buffer{}}
	cmd.Stderr = h.stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	h.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
	}()
	line, ok := <-h.lines
	require.True(t, ok && line == "ready", "helper did not start: %q\n%s", line, h.stderr.String())
	return h
}

func (h *helper) go_(t *testing.T) {
	t.Helper()
	_, err := io.WriteString(h.stdin, "go\n")
	require.NoError(t, err)
}

// results waits for the helper to end and returns its result lines.
func (h *helper) results(t *testing.T) []string {
	t.Helper()
	var out []string
	for l := range h.lines {
		out = append(out, l)
	}
	err := h.cmd.Wait()
	require.NoError(t, err, "helper failed:\n%s", h.stderr.String())
	return out
}

func grantAlice(t *testing.T, f *fixture, s *mandate.Store) {
	t.Helper()
	require.NoError(t, f.record(s.Grant(context.Background(), alice, agentClient, f.offlineToken(alice))))
}

// Four processes redeem the same mandate at once against a provider that
// rotates refresh tokens and refuses a used one: every redemption
// succeeds, and the provider never sees a refresh token twice.
func testConcurrentProcesses(t *testing.T, b backend) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	f := newFixture(t, oidctest.Options{})
	dsn := b.newDSN(t)
	key := newKey(t)
	grantAlice(t, f, b.open(t, dsn, mandate.WithKey(key)))

	const procs = 4
	total := 0
	var hs []*helper
	for range procs {
		rounds := 3 + rng.IntN(4)
		total += rounds
		hs = append(hs, startHelper(t, f, b, dsn, key, rounds, 10*time.Second))
	}
	for _, h := range hs {
		h.go_(t)
	}
	oks := 0
	for i, h := range hs {
		for _, l := range h.results(t) {
			if assert.True(t, strings.HasPrefix(l, "ok "), "process %d: %s\n%s", i, l, h.stderr.String()) {
				oks++
			}
		}
	}
	assert.Equal(t, total, oks)
	assert.Zero(t, f.op.RefreshTokenReuses(), "the provider saw a refresh token twice")
	assert.Equal(t, total, f.op.RefreshGrants())
	assert.Equal(t, 1, f.op.ActiveRefreshTokens(alice, agentClient), "the stored mandate is the one live refresh token")
	tok, err := b.open(t, dsn, mandate.WithKey(key), mandate.WithAgent(agentClient, f.config())).Token(context.Background(), alice, agentClient)
	require.NoError(t, f.record(err), "the mandate still works after the race")
	f.trackToken(tok)
}

// A holder killed (SIGKILL) while its refresh is at the provider leaves
// its lease behind; the next process takes it over once it expires, and
// everyone else then redeems in turn. The provider dropped the killed
// holder's request unanswered, so no refresh token is presented twice.
func testKilledHolder(t *testing.T, b backend) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	f := newFixture(t, oidctest.Options{})
	dsn := b.newDSN(t)
	key := newKey(t)
	grantAlice(t, f, b.open(t, dsn, mandate.WithKey(key)))
	const lease = time.Second

	arrived := make(chan struct{})
	var first atomic.Bool
	f.op.HoldRefreshes(func(ctx context.Context) error {
		if first.CompareAndSwap(false, true) {
			close(arrived)
			<-ctx.Done() // the holder is killed: its connection closes
			return ctx.Err()
		}
		return nil
	})
	victim := startHelper(t, f, b, dsn, key, 1, lease)
	victim.go_(t)
	<-arrived
	require.NoError(t, victim.cmd.Process.Kill())
	_ = victim.cmd.Wait()
	killed := time.Now()

	var hs []*helper
	total := 0
	for range 3 {
		rounds := 1 + rng.IntN(3)
		total += rounds
		hs = append(hs, startHelper(t, f, b, dsn, key, rounds, lease))
	}
	for _, h := range hs {
		h.go_(t)
	}
	takeovers := 0
	for i, h := range hs {
		for _, l := range h.results(t) {
			assert.True(t, strings.HasPrefix(l, "ok "), "process %d: %s\n%s", i, l, h.stderr.String())
		}
		takeovers += strings.Count(h.stderr.String(), "mandate lease taken over from a holder that stopped renewing it")
	}
	t.Logf("all redeemed %v after the kill (lease %v)", time.Since(killed), lease)
	assert.Equal(t, 1, takeovers, "the dead holder's lease is taken over exactly once")
	assert.Zero(t, f.op.RefreshTokenReuses(), "the provider saw a refresh token twice")
	assert.Equal(t, total, f.op.RefreshGrants())
}

// A holder whose lease expired (it stopped renewing, as a paused process
// does) and was taken over cannot persist what the provider then gives it:
// the write is fenced and reported as not persisted, and the row keeps
// what it held.
func testFencing(t *testing.T, b backend) {
	ctx := context.Background()
	f := newFixture(t, oidctest.Options{})
	dsn := b.newDSN(t)
	key := newKey(t)
	opts := []mandate.Option{mandate.WithKey(key), mandate.WithAgent(agentClient, f.config()),
		mandate.WithLease(200 * time.Millisecond), mandate.WithLogger(f.logger)}
	paused := b.open(t, dsn, opts...)
	paused.StopRenewing()
	other := b.open(t, dsn, opts...)
	grantAlice(t, f, paused)
	before := sealedRow(t, paused)

	arrivedA, arrivedB := make(chan struct{}), make(chan struct{})
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	var n atomic.Int32
	f.op.HoldRefreshes(func(ctx context.Context) error {
		switch n.Add(1) {
		case 1:
			close(arrivedA)
			<-releaseA
		case 2:
			close(arrivedB)
			<-releaseB
		}
		return nil
	})
	var errA, errB error
	doneA, doneB := make(chan struct{}), make(chan struct{})
	go func() { _, errA = paused.Token(ctx, alice, agentClient); close(doneA) }()
	<-arrivedA
	go func() { _, errB = other.Token(ctx, alice, agentClient); close(doneB) }()
	<-arrivedB // B took the expired lease over and presented the token too
	// A's refresh is answered first, with a rotated token A may not
	// persist; then B's, with the token A's request made stale.
	close(releaseA)
	<-doneA
	close(releaseB)
	<-doneB
	f.record(errA)
	f.record(errB)
	assert.Equal(t, mandate.KindRotationNotPersisted, mandate.Classify(errA), "A: %v", errA)
	assert.ErrorIs(t, errA, tokenexchange.ErrRotationNotPersisted)
	assert.Equal(t, mandate.KindRejected, mandate.Classify(errB), "B: %v", errB)
	assert.Equal(t, before, sealedRow(t, paused), "the fenced holder overwrote the mandate")
}

// sealedRow reads alice's sealed token and fence.
func sealedRow(t *testing.T, s *mandate.Store) string {
	t.Helper()
	var sealed []byte
	var fence int64
	require.NoError(t, s.DB().QueryRow(s.Q(`SELECT sealed, fence FROM `+s.Table()+` WHERE user_id = ? AND agent = ?`),
		alice, agentClient).Scan(&sealed, &fence))
	return hex.EncodeToString(sealed)
}

// --- PostgreSQL only ---

func testPostgresBasics(t *testing.T, b backend) {
	ctx := context.Background()
	f := newFixture(t, oidctest.Options{})
	dsn := b.newDSN(t)
	key := newKey(t)
	s := b.open(t, dsn, mandate.WithKey(key), mandate.WithAgent(agentClient, f.config()), mandate.WithLogger(f.logger))
	grantAlice(t, f, s)
	for range 3 {
		tok, err := s.Token(ctx, alice, agentClient)
		require.NoError(t, f.record(err))
		f.trackToken(tok)
		assert.Equal(t, alice, tok.Subject)
		assert.Equal(t, []string{mcpServer}, tok.Audience)
	}
	assert.Equal(t, 3, f.op.RefreshGrants())
	require.NoError(t, f.record(s.Revoke(ctx, alice, agentClient)))
	_, err := s.Token(ctx, alice, agentClient)
	f.record(err)
	assert.Equal(t, mandate.KindRevoked, mandate.Classify(err))
	_, err = s.Token(ctx, "bob", agentClient)
	assert.Equal(t, mandate.KindNoMandate, mandate.Classify(err))
	assert.Equal(t, 3, f.op.RefreshGrants(), "refused before any request")

	// A *sql.DB built from a pgx connection config is recognised too.
	cfg, err := pgxdriver.ParseConfig(dsn)
	require.NoError(t, err)
	viaConfig := stdlib.OpenDB(*cfg)
	defer viaConfig.Close()
	s3, err := mandate.OpenDB(ctx, viaConfig, mandate.WithKey(key))
	require.NoError(t, err)
	require.NoError(t, s3.Close())

	// A store on another key cannot open the row.
	wrong := b.open(t, dsn, mandate.WithKey(newKey(t)), mandate.WithAgent(agentClient, f.config()))
	grantAlice(t, f, s)
	_, err = wrong.Token(ctx, alice, agentClient)
	assert.Equal(t, mandate.KindUnreadable, mandate.Classify(err))
}

func testPostgresSchema(t *testing.T, b backend) {
	ctx := context.Background()
	dsn := b.newDSN(t)
	key := newKey(t)
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()

	s, err := mandate.OpenDB(ctx, db, mandate.WithKey(key), mandate.WithSchema("agents_a"))
	require.NoError(t, err)
	require.NoError(t, s.Grant(ctx, alice, agentClient, "refresh-token-value"))
	require.NoError(t, s.Close())
	require.NoError(t, db.PingContext(ctx), "Close closed the caller's database")
	// Another schema is another store.
	s2, err := mandate.OpenDB(ctx, db, mandate.WithKey(key), mandate.WithLease(mandate.DefaultLease))
	require.NoError(t, err)
	assert.Equal(t, mandate.KindNoMandate, mandate.Classify(s2.Revoke(ctx, alice, agentClient)))
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM agents_a.candor_mandates`).Scan(&n))
	assert.Equal(t, 1, n)
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+mandate.DefaultSchema+`.candor_mandates_migrations`).Scan(&n))
	assert.Equal(t, 1, n)

	for _, bad := range []string{"", "Agents", "a-b", `a"b`, strings.Repeat("a", 64)} {
		_, err = mandate.OpenDB(ctx, db, mandate.WithKey(key), mandate.WithSchema(bad))
		assert.Equal(t, mandate.KindConfig, mandate.Classify(err), "schema %q", bad)
	}
	// An altered record, and one from a newer program, are refused.
	_, err = db.Exec(`UPDATE agents_a.candor_mandates_migrations SET checksum = 'x' WHERE version = 1`)
	require.NoError(t, err)
	_, err = mandate.OpenDB(ctx, db, mandate.WithKey(key), mandate.WithSchema("agents_a"))
	assert.ErrorIs(t, err, mandate.ErrSchema)
	_, err = db.Exec(`INSERT INTO candor.candor_mandates_migrations (version, name, checksum, applied_at) VALUES (2, 'future', 'x', 0)`)
	require.NoError(t, err)
	_, err = mandate.OpenDB(ctx, db, mandate.WithKey(key))
	assert.ErrorIs(t, err, mandate.ErrSchema)
	assert.Equal(t, mandate.KindSchema, mandate.Classify(err))
}

// PostgreSQL stopped mid-run: every call fails with a store error before
// anything reaches the provider; a rotation the provider made while the
// server was down is reported as not persisted, and the row keeps the old
// token; after a restart the store goes on.
func testServerStopped(t *testing.T, b backend) {
	ctx := context.Background()
	f := newFixture(t, oidctest.Options{})
	// Its own cluster: this test stops the server.
	c := pgtest.Start(t)
	dsn := c.NewDatabase(t)
	key := newKey(t)
	s := backend{name: "postgres", cluster: c}.open(t, dsn, mandate.WithKey(key),
		mandate.WithAgent(agentClient, f.config()), mandate.WithLease(3*time.Second), mandate.WithLogger(f.logger))
	grantAlice(t, f, s)
	tok, err := s.Token(ctx, alice, agentClient)
	require.NoError(t, f.record(err))
	f.trackToken(tok)

	c.Stop(t, pgtest.StopOptions{Immediate: true})
	grants := f.op.RefreshGrants()
	_, err = s.Token(ctx, alice, agentClient)
	f.record(err)
	assert.Equal(t, mandate.KindStore, mandate.Classify(err), "%v", err)
	assert.ErrorIs(t, err, mandate.ErrStore)
	assert.Equal(t, grants, f.op.RefreshGrants(), "a request reached the provider without a lease")
	err = s.Grant(ctx, "bob", agentClient, "refresh-token-of-bob")
	assert.Equal(t, mandate.KindStore, mandate.Classify(f.record(err)), "%v", err)
	err = s.Revoke(ctx, alice, agentClient)
	assert.Equal(t, mandate.KindStore, mandate.Classify(f.record(err)), "%v", err)

	c.Start(t)
	tok, err = s.Token(ctx, alice, agentClient)
	require.NoError(t, f.record(err), "after the restart")
	f.trackToken(tok)
	assert.Equal(t, mandate.KindNoMandate, mandate.Classify(s.Revoke(ctx, "bob", agentClient)), "bob's grant was reported failed and is not there")

	// The server stops while the refresh is at the provider.
	before := sealedRow(t, s)
	arrived, release := make(chan struct{}), make(chan struct{})
	f.op.HoldRefreshes(func(context.Context) error {
		close(arrived)
		<-release
		return nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := s.Token(ctx, alice, agentClient)
		done <- err
	}()
	<-arrived
	c.Stop(t, pgtest.StopOptions{Immediate: true})
	f.op.HoldRefreshes(nil)
	close(release)
	err = <-done
	f.record(err)
	assert.Equal(t, mandate.KindRotationNotPersisted, mandate.Classify(err), "%v", err)
	assert.ErrorIs(t, err, mandate.ErrStore)
	c.Start(t)
	assert.Equal(t, before, sealedRow(t, s), "a rotation reported not persisted was persisted")
	// The stored token was rotated away at the provider: the mandate is
	// refused there, and a new grant works.
	_, err = s.Token(ctx, alice, agentClient)
	assert.Equal(t, mandate.KindRejected, mandate.Classify(f.record(err)), "%v", err)
	grantAlice(t, f, s)
	tok, err = s.Token(ctx, alice, agentClient)
	require.NoError(t, f.record(err))
	f.trackToken(tok)
}
