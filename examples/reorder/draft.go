package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/candorkit/candor/reorder"
)

// draftKind names the draft format; it is part of every draft so that a
// later format can never be mistaken for this one.
const draftKind = "candor.reorder.proposal/v1"

// Draft is what a person approves: the proposal lines of one run, with what
// is needed to check them (the rule and the scan's coverage). It is the
// approval ticket's draft, stored as canonical JSON and copied verbatim into
// the approved item that the effect turns into reorders rows.
type Draft struct {
	Kind string `json:"kind"`
	// RunDate is the calendar day of the run in the schedule's zone
	// (YYYY-MM-DD); Zone names that zone.
	RunDate string `json:"runDate"`
	Zone    string `json:"zone"`
	// Subject is the person whose mandate the catalog was read with.
	Subject      string      `json:"subject"`
	ReorderPoint int         `json:"reorderPoint"`
	OrderUpTo    int         `json:"orderUpTo"`
	Scanned      int         `json:"scanned"`
	Total        int         `json:"total"`
	Complete     bool        `json:"complete"`
	Lines        []DraftLine `json:"lines"`
}

// DraftLine is one purchase a person is asked to approve.
type DraftLine struct {
	Code     string `json:"code"`
	Name     string `json:"name"`
	Vendor   string `json:"vendor"`
	OnHand   int    `json:"onHand"`
	Quantity int    `json:"quantity"`
}

// newDraft turns a proposal into a draft. The caller decides whether it may
// become a ticket (Validate says).
func newDraft(p reorder.Proposal, pol reorder.Thresholds, runDate, zone, subject string) Draft {
	pol = pol.WithDefaults()
	d := Draft{
		Kind: draftKind, RunDate: runDate, Zone: zone, Subject: subject,
		ReorderPoint: pol.ReorderPoint, OrderUpTo: pol.OrderUpTo,
		Scanned: p.Scanned, Total: p.Total, Complete: p.Complete,
		Lines: make([]DraftLine, 0, len(p.Lines)),
	}
	for _, l := range p.Lines {
		d.Lines = append(d.Lines, DraftLine(l))
	}
	return d
}

// Validate lists every reason the draft cannot be approved. A draft from an
// incomplete scan is refused: the approver would otherwise sign a proposal
// that does not cover the catalog. Each line must follow the rule the draft
// states (on hand strictly below the reorder point, quantity = order-up-to
// minus on hand), so a draft edited in the database or produced by a faulty
// run is refused again when it is applied.
func (d Draft) Validate() []error {
	var errs []error
	if d.Kind != draftKind {
		errs = append(errs, fmt.Errorf("kind %q, want %q", d.Kind, draftKind))
	}
	if _, err := time.Parse(time.DateOnly, d.RunDate); err != nil {
		errs = append(errs, fmt.Errorf("run date %q is not YYYY-MM-DD", d.RunDate))
	}
	if d.Zone == "" {
		errs = append(errs, errors.New("zone is empty"))
	}
	if d.Subject == "" {
		errs = append(errs, errors.New("subject is empty: no mandate named the person"))
	}
	if !d.Complete {
		errs = append(errs, errors.New("the scan is incomplete: a proposal covering part of the catalog cannot be approved"))
	}
	if d.Total != 0 && d.Scanned != d.Total {
		errs = append(errs, fmt.Errorf("scanned %d of a reported %d", d.Scanned, d.Total))
	}
	if d.ReorderPoint <= 0 || d.OrderUpTo < d.ReorderPoint {
		errs = append(errs, fmt.Errorf("rule: reorder point %d, order up to %d", d.ReorderPoint, d.OrderUpTo))
	}
	if len(d.Lines) == 0 {
		errs = append(errs, errors.New("no line: nothing to approve"))
	}
	if len(d.Lines) > d.Scanned {
		errs = append(errs, fmt.Errorf("%d lines for %d items scanned", len(d.Lines), d.Scanned))
	}
	seen := make(map[string]bool, len(d.Lines))
	for i, l := range d.Lines {
		at := fmt.Sprintf("line %d (%s)", i+1, l.Code)
		if l.Code == "" {
			errs = append(errs, fmt.Errorf("line %d: empty product code", i+1))
		} else if seen[l.Code] {
			errs = append(errs, fmt.Errorf("%s: code appears twice", at))
		}
		seen[l.Code] = true
		if l.OnHand < 0 {
			errs = append(errs, fmt.Errorf("%s: negative on-hand quantity %d", at, l.OnHand))
		}
		if l.OnHand >= d.ReorderPoint {
			errs = append(errs, fmt.Errorf("%s: on hand %d is not below the reorder point %d", at, l.OnHand, d.ReorderPoint))
		}
		if l.Quantity <= 0 || l.Quantity != d.OrderUpTo-l.OnHand {
			errs = append(errs, fmt.Errorf("%s: quantity %d, the rule gives %d", at, l.Quantity, d.OrderUpTo-l.OnHand))
		}
	}
	return errs
}

// operationID derives the approval operation id of a run from its date and
// a digest of its draft: "reorder-2025-06-02-" followed by the first 12 hex
// digits of the SHA-256 of the draft's JSON.
//
// The same run repeated the same day on an unchanged catalog gives the same
// draft, hence the same id, and approval.Register then changes nothing: no
// second ticket. A different proposal (stock moved, another rule) is a
// different draft and gets its own id rather than being refused as a
// rebinding of the first, because it is a different thing to approve; the
// date keeps ids of different days apart even for identical lines, so
// yesterday's approved order never absorbs today's need.
func operationID(d Draft) (string, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "reorder-" + d.RunDate + "-" + hex.EncodeToString(sum[:6]), nil
}

// decodeDraft reads a persisted draft strictly: unknown fields or trailing
// data mean it is not a draft this program wrote.
func decodeDraft(raw []byte) (Draft, error) {
	var d Draft
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return Draft{}, fmt.Errorf("stored draft is not a reorder proposal: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Draft{}, errors.New("stored draft is followed by other data")
	}
	return d, nil
}
