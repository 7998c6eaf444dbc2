package approval

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// WaitingReceipt is what a host keeps on disk while an operation waits for
// a person, so that another process (a restart, a later deploy of the same
// graph) can pick the run up where it stopped. Every field is required.
type WaitingReceipt struct {
	GraphVersion string `json:"graph_version"`
	SessionID    string `json:"session_id"`
	CheckpointID string `json:"checkpoint_id"`
	OperationID  string `json:"operation_id"`
	RequestID    string `json:"request_id"`
}

// Bounds on receipts.
const (
	// MaxReceiptFieldBytes bounds each field of a WaitingReceipt.
	MaxReceiptFieldBytes = 256
	// MaxReceiptFileBytes bounds what ReadReceiptFile reads.
	MaxReceiptFileBytes = 16 << 10
)

func (r WaitingReceipt) check() error {
	fields := []struct{ name, v string }{
		{"graph_version", r.GraphVersion}, {"session_id", r.SessionID}, {"checkpoint_id", r.CheckpointID},
		{"operation_id", r.OperationID}, {"request_id", r.RequestID},
	}
	var problems []error
	for _, f := range fields {
		switch {
		case f.v == "":
			problems = append(problems, fmt.Errorf("%w: %s is empty", ErrInvalidReceipt, f.name))
		case len(f.v) > MaxReceiptFieldBytes:
			problems = append(problems, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrInvalidReceipt, f.name, len(f.v), MaxReceiptFieldBytes))
		case !utf8.ValidString(f.v):
			problems = append(problems, fmt.Errorf("%w: %s is not UTF-8", ErrInvalidReceipt, f.name))
		case strings.ContainsRune(f.v, 0):
			problems = append(problems, fmt.Errorf("%w: %s holds NUL", ErrInvalidReceipt, f.name))
		}
	}
	return errors.Join(problems...)
}

// Receipt records r as issued by this store for an operation it holds, and
// returns it; the host then writes it to disk (WriteReceiptFile). Issuing
// the same receipt again is a no-op. A receipt with a missing field is
// ErrInvalidReceipt; one for an operation the store does not hold is
// ErrUnknownOperation.
func (s *Store) Receipt(ctx context.Context, r WaitingReceipt) (WaitingReceipt, error) {
	if err := r.check(); err != nil {
		return WaitingReceipt{}, err
	}
	if err := checkOperationID(r.OperationID); err != nil {
		return WaitingReceipt{}, err
	}
	err := s.writeOne(ctx, func(tx *sql.Tx) error {
		res, err := s.exec(ctx, tx, s.q.insertReceipt,
			r.OperationID, r.GraphVersion, r.SessionID, r.CheckpointID, r.RequestID, time.Now().UTC().UnixNano())
		if err != nil {
			return fmt.Errorf("approval: record receipt for %q: %w", r.OperationID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("approval: record receipt for %q: %w", r.OperationID, err)
		} else if n == 0 {
			// Issued before, or an unknown operation.
			_, err := s.readState(ctx, tx, r.OperationID)
			return err
		}
		return nil
	})
	if err != nil {
		return WaitingReceipt{}, err
	}
	return r, nil
}

// Resume picks up a waiting run from its receipt in the process running
// graphVersion, and returns the operation's current state (the caller then
// sees whether it was decided, and Applies it if approved).
//
// It refuses a receipt from another graph version (*GraphVersionError,
// ErrGraphVersionMismatch), a receipt with a missing field
// (ErrInvalidReceipt), one for an operation the store does not hold
// (ErrUnknownOperation) and one the store never issued (ErrUnknownReceipt).
func (s *Store) Resume(ctx context.Context, r WaitingReceipt, graphVersion string) (State, error) {
	if err := r.check(); err != nil {
		return State{}, err
	}
	if graphVersion == "" {
		return State{}, fmt.Errorf("%w: the running graph version is empty", ErrInvalidReceipt)
	}
	if r.GraphVersion != graphVersion {
		return State{}, &GraphVersionError{OperationID: r.OperationID, Receipt: r.GraphVersion, Want: graphVersion}
	}
	st, err := s.Read(ctx, r.OperationID)
	if err != nil {
		return State{}, err
	}
	var one int
	q, err := s.prepared(ctx, nil, s.q.findReceipt)
	if err != nil {
		return State{}, err
	}
	err = q.QueryRowContext(ctx,
		r.OperationID, r.GraphVersion, r.SessionID, r.CheckpointID, r.RequestID).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return State{}, fmt.Errorf("%w: operation %q, session %q, checkpoint %q, request %q",
			ErrUnknownReceipt, r.OperationID, r.SessionID, r.CheckpointID, r.RequestID)
	case err != nil:
		return State{}, fmt.Errorf("approval: look up receipt: %w", s.dbErr(err))
	}
	s.info(ctx, "approval: resumed", slog.String("operation_id", r.OperationID), slog.String("status", string(st.Status)))
	return st, nil
}

// WriteReceiptFile writes r as JSON to path atomically: a temporary file in
// the same directory, synced, then renamed over path, then the directory
// synced. A reader sees the old receipt or the new one, never a torn one.
// The file is created with mode 0600.
func WriteReceiptFile(path string, r WaitingReceipt) (err error) {
	if err := r.check(); err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("approval: encode receipt: %w", err)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("approval: write receipt: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreNotExist(os.Remove(tmp)))
		}
	}()
	if _, err := f.Write(append(data, '\n')); err != nil {
		return errors.Join(fmt.Errorf("approval: write receipt: %w", err), f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(fmt.Errorf("approval: sync receipt: %w", err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("approval: close receipt: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("approval: rename receipt: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("approval: sync receipt directory: %w", err)
	}
	return errors.Join(d.Sync(), d.Close())
}

func ignoreNotExist(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// ReadReceiptFile reads a receipt written by WriteReceiptFile. It reads at
// most MaxReceiptFileBytes; a larger file, a file that is not exactly one
// receipt object (unknown or missing fields, trailing data) is
// ErrInvalidReceipt and the error holds the bytes read.
func ReadReceiptFile(path string) (WaitingReceipt, error) {
	f, err := os.Open(path)
	if err != nil {
		return WaitingReceipt{}, fmt.Errorf("approval: open receipt: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxReceiptFileBytes+1))
	if err != nil {
		return WaitingReceipt{}, fmt.Errorf("approval: read receipt: %w", err)
	}
	if len(data) > MaxReceiptFileBytes {
		return WaitingReceipt{}, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalidReceipt, path, MaxReceiptFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r WaitingReceipt
	if err := dec.Decode(&r); err != nil {
		return WaitingReceipt{}, fmt.Errorf("%w: %s: %v (raw %q)", ErrInvalidReceipt, path, err, data)
	}
	if _, err := dec.Token(); err != io.EOF {
		return WaitingReceipt{}, fmt.Errorf("%w: %s: trailing data (raw %q)", ErrInvalidReceipt, path, data)
	}
	if err := r.check(); err != nil {
		return WaitingReceipt{}, fmt.Errorf("%w (raw %q)", err, data)
	}
	return r, nil
}
