package main

import (
	"bytes"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/pgtest"
	"github.com/candorkit/candor/internal/testproc"
	"github.com/candorkit/candor/tokenexchange/mandate"
)

// runBin runs the built program with env added to the environment.
func runBin(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestPostgresStores runs the agent once with the approval and mandate
// stores on PostgreSQL, then approves the ticket in another process with
// another state directory, against the same DSN: the reorders row is
// written once, in the database, and no SQLite store is created.
func TestPostgresStores(t *testing.T) {
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	password, ok := u.User.Password()
	require.True(t, ok)
	bin := testproc.Build(t, ".")
	state1, state2 := t.TempDir(), t.TempDir()

	out, errs, code := runBin(t, bin, []string{envState + "=" + state1}, "-once", "-approvals", dsn, "-mandates", dsn)
	require.Equal(t, exitOK, code, "%s\n%s", out, errs)
	assert.Contains(t, out, "scanned 110 of 110, complete")
	assert.NotContains(t, out+errs, password)
	m := ticketRE.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	id := m[1]
	// The printed command names the database without the password.
	assert.Contains(t, out, "approve: "+bin+" approve -approvals '"+pgdsnServer(t, dsn)+"' "+id)

	for i, want := range []string{"applied: 1 reorders row(s) written", "already applied"} {
		out, errs, code = runBin(t, bin, []string{envState + "=" + state2}, "approve", "-by", "alice", "-approvals", dsn, id)
		require.Equal(t, exitOK, code, "approve %d: %s\n%s", i, out, errs)
		assert.Contains(t, out, want)
		assert.NotContains(t, out+errs, password)
	}
	out, errs, code = runBin(t, bin, []string{envState + "=" + state2, envApprovals + "=" + dsn}, "show", id)
	require.Equal(t, exitOK, code, "show: %s\n%s", out, errs)
	assert.Contains(t, out, "decision: approve by alice")

	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()
	var rows, mandates int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM candor_reorder.reorders WHERE operation_id = $1`, id).Scan(&rows))
	assert.Equal(t, 1, rows, "reorders rows of %s", id)
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+mandate.DefaultSchema+`.candor_mandates`).Scan(&mandates))
	assert.Equal(t, 1, mandates, "mandates in PostgreSQL")
	for _, dir := range []string{state1, state2} {
		for _, f := range []string{approvalsFile, mandatesFile} {
			_, err := os.Stat(filepath.Join(dir, f))
			assert.True(t, os.IsNotExist(err), "%s in %s: %v", f, dir, err)
		}
	}
}

func pgdsnServer(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	return "postgres://" + u.User.Username() + "@" + u.Host + u.Path
}

// TestStoreDSNErrors pins that a malformed DSN is a usage error on the
// command line (exit 2) and a configuration error in the environment (exit
// 3), and an unreachable database a failure (exit 1), none printing the
// password.
func TestStoreDSNErrors(t *testing.T) {
	const password = "s3cret-Pa55word"
	bad := "postgres://candor:" + password + "@127.0.0.1:notaport/db"
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"run -approvals", nil, []string{"-once", "-approvals", bad}, exitUsage, "-approvals: not a valid PostgreSQL connection string"},
		{"run -mandates", nil, []string{"-once", "-mandates", bad}, exitUsage, "-mandates: not a valid PostgreSQL connection string"},
		{"approve", nil, []string{"approve", "-approvals", bad, "reorder-x"}, exitUsage, "-approvals: not a valid"},
		{"show", nil, []string{"show", "-approvals", bad, "reorder-x"}, exitUsage, "-approvals: not a valid"},
		{"grant", nil, []string{"grant", "-mandates", bad}, exitUsage, "-mandates: not a valid"},
		{"env approvals", map[string]string{envApprovals: bad}, []string{"-once"}, exitConfig, envApprovals + ": not a valid"},
		{"env mandates", map[string]string{envMandates: bad}, []string{"revoke"}, exitConfig, envMandates + ": not a valid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.env = c.env
			if h.env == nil {
				h.env = map[string]string{}
			}
			r := h.run(c.args...)
			assert.Equal(t, c.code, r.code, r.stderr)
			assert.Contains(t, r.stderr, c.want)
			assert.NotContains(t, r.stdout+r.stderr, password)
		})
	}

	cluster := pgtest.Start(t)
	dsn := cluster.DSN
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	pw, _ := u.User.Password()
	require.NotEmpty(t, pw)
	cluster.Stop(t, pgtest.StopOptions{})
	h := newHarness(t)
	r := h.run("approve", "-approvals", dsn, "reorder-x")
	assert.Equal(t, exitFail, r.code, r.stderr)
	assert.Contains(t, r.stderr, "-approvals: PostgreSQL postgres://postgres@")
	assert.Contains(t, r.stderr, "unreachable")
	assert.NotContains(t, r.stdout+r.stderr, pw)
}
