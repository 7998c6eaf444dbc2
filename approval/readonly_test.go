package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readOnlyReport is what the read-only child writes.
type readOnlyReport struct {
	UID          int      `json:"uid"`
	CanWriteDir  bool     `json:"can_write_dir"`
	CanWriteFile bool     `json:"can_write_file"`
	RWOpened     bool     `json:"rw_opened"`
	RWErr        string   `json:"rw_err"`
	RWKind       Kind     `json:"rw_kind"`
	ROErr        string   `json:"ro_err"`
	Listed       []Status `json:"listed"`
	RegisterKind Kind     `json:"register_kind"`
}

// runReadOnlyChild tries the store at childDB, in a directory it should
// not be able to write, read-write and then read-only.
func runReadOnlyChild() int {
	ctx := context.Background()
	path := os.Getenv(childDB)
	rep := readOnlyReport{UID: os.Getuid()}
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "probe"), nil, 0o600); err == nil {
		rep.CanWriteDir = true
	}
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		f.Close()
		rep.CanWriteFile = true
	}
	if s, err := Open(ctx, path); err == nil {
		s.Close()
		rep.RWOpened = true
	} else {
		rep.RWErr, rep.RWKind = err.Error(), Classify(err)
	}
	s, err := Open(ctx, path, WithReadOnly())
	if err != nil {
		rep.ROErr = err.Error()
	} else {
		for st, err := range s.All(ctx, Filter{}) {
			if err != nil {
				rep.ROErr = err.Error()
				break
			}
			rep.Listed = append(rep.Listed, st.Status)
		}
		_, err := s.Register(ctx, Ticket{OperationID: "new", Draft: testDraft{Title: "t", Quantity: 1}})
		rep.RegisterKind = Classify(err)
		if err := s.Close(); err != nil && rep.ROErr == "" {
			rep.ROErr = err.Error()
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 3
	}
	return 0
}

// TestReadOnlyDirectory: a store file with mode 0444 in a directory with
// mode 0555 (as on a read-only mount) cannot be opened read-write, and the
// error names the path and the remedy; WithReadOnly reads it. The check
// runs in a child process that cannot write there: when the test runs as
// root, which file permissions do not bind, the child runs as the user
// nobody (uid 65534) from a copy of the test binary it may execute. The
// child first confirms that it can write neither the file nor the
// directory.
func TestReadOnlyDirectory(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "ro")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "approvals.db")
	s := openTest(t, path)
	for _, op := range []string{"w", "a", "c"} {
		_, err := s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: op, Quantity: 1}})
		require.NoError(t, err)
	}
	for _, op := range []string{"a", "c"} {
		_, err := s.Decide(ctx, Decision{OperationID: op, Verdict: Approve, DecidedBy: "x"})
		require.NoError(t, err)
	}
	_, err := s.Apply(ctx, "c", nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	bin := os.Args[0]
	var attr *syscall.SysProcAttr
	if os.Getuid() == 0 {
		for _, d := range []string{filepath.Dir(base), base} {
			require.NoError(t, os.Chmod(d, 0o755))
		}
		bin = filepath.Join(base, "approval.test")
		copyFile(t, os.Args[0], bin, 0o755)
		attr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	require.NoError(t, os.Chmod(path, 0o444))
	require.NoError(t, os.Chmod(dir, 0o555))
	t.Cleanup(func() { os.Chmod(dir, 0o755) })

	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), childRole+"=readonly", childDB+"="+path)
	cmd.SysProcAttr = attr
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "child: %s", stderr.String())
	var rep readOnlyReport
	require.NoError(t, json.Unmarshal(out, &rep), "%s", out)
	t.Logf("child ran as uid %d; its read-write open: %s", rep.UID, rep.RWErr)

	require.False(t, rep.CanWriteDir, "premise: the child can write the directory")
	require.False(t, rep.CanWriteFile, "premise: the child can write the file")
	assert.False(t, rep.RWOpened, "a read-write Open succeeded")
	assert.Equal(t, KindReadOnly, rep.RWKind, rep.RWErr)
	assert.Contains(t, rep.RWErr, path)
	assert.Contains(t, rep.RWErr, "WithReadOnly")
	assert.Empty(t, rep.ROErr)
	assert.Equal(t, []Status{StatusWaiting, StatusApproved, StatusCompleted}, rep.Listed)
	assert.Equal(t, KindReadOnly, rep.RegisterKind)
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

// TestReadOnlyLive: a read-only store beside a writer sees its writes (it
// is not read as immutable where the directory can be written) and
// refuses to write.
func TestReadOnlyLive(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "live.db")
	w := openTest(t, path)
	defer w.Close()
	r := openTest(t, path, WithReadOnly())
	defer r.Close()
	_, err := w.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}})
	require.NoError(t, err)
	st, err := r.Read(ctx, "op")
	require.NoError(t, err)
	assert.Equal(t, StatusWaiting, st.Status)
	_, err = w.Decide(ctx, Decision{OperationID: "op", Verdict: Approve, DecidedBy: "a"})
	require.NoError(t, err)
	st, err = r.Read(ctx, "op")
	require.NoError(t, err)
	assert.Equal(t, StatusApproved, st.Status)
	for name, err := range map[string]error{
		"Register": func() error {
			_, err := r.Register(ctx, Ticket{OperationID: "x", Draft: testDraft{Title: "t", Quantity: 1}})
			return err
		}(),
		"Decide": func() error {
			_, err := r.Decide(ctx, Decision{OperationID: "op", Verdict: Approve, DecidedBy: "a"})
			return err
		}(),
		"Apply": func() error { _, err := r.Apply(ctx, "op", nil); return err }(),
		"Receipt": func() error {
			_, err := r.Receipt(ctx, WaitingReceipt{GraphVersion: "g", SessionID: "s", CheckpointID: "c", OperationID: "op", RequestID: "r"})
			return err
		}(),
	} {
		assert.ErrorIs(t, err, ErrReadOnly, name)
	}
	_, err = Open(ctx, filepath.Join(t.TempDir(), "missing.db"), WithReadOnly())
	assert.ErrorIs(t, err, ErrNoStore, "a read-only open never creates")
}
