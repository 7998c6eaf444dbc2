package mandate

import "database/sql"

// DB exposes the store's database to the tests, which inspect and damage rows.
func (s *Store) DB() *sql.DB { return s.db }

// Table is the mandate table's name as the store's statements write it.
func (s *Store) Table() string { return s.dialect.table }

// Q rewrites a statement with ? placeholders for the store's backend.
func (s *Store) Q(query string) string { return s.dialect.q(query) }

// InProcessLockOnly makes the store redeem under its in-process lock alone,
// as it did before leases: the benchmark's baseline.
func (s *Store) InProcessLockOnly() { s.noLease = true }

// StopRenewing makes the store stop renewing its leases, as if its process
// were paused: another store takes them over once they expire.
func (s *Store) StopRenewing() { s.noRenew = true }
