package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds a BacklogDraft must keep.
const (
	maxTitleRunes   = 200
	maxAreaRunes    = 100
	maxSummaryRunes = 4000
	maxLinks        = 20
	maxLinkBytes    = 2048
)

// The backlog's vocabularies.
func draftTypes() []string      { return []string{"Bug", "Feature", "Question", "Task"} }
func draftPriorities() []string { return []string{"low", "medium", "high"} }

// BacklogDraft is the proposal a person approves: one backlog item. It is
// registered in the approval store as canonical JSON and applied from that
// stored copy only.
type BacklogDraft struct {
	Title    string   `json:"title"`
	Type     string   `json:"type"`     // Bug, Feature, Question or Task
	Priority string   `json:"priority"` // low, medium or high
	Area     string   `json:"area"`
	Summary  string   `json:"summary"` // for this agent: the text AnswerGate accepted
	Links    []string `json:"links"`   // absolute http(s) URLs; empty, never null
}

// Validate returns every problem with the draft (nil when there is none).
// It implements approval.Draft.
func (d BacklogDraft) Validate() []error {
	var errs []error
	text := func(field, v string, limit int) {
		switch {
		case !utf8.ValidString(v):
			errs = append(errs, fmt.Errorf("%s is not valid UTF-8", field))
		case strings.TrimSpace(v) == "":
			errs = append(errs, fmt.Errorf("%s is empty", field))
		case strings.TrimSpace(v) != v:
			errs = append(errs, fmt.Errorf("%s has leading or trailing white space", field))
		case utf8.RuneCountInString(v) > limit:
			errs = append(errs, fmt.Errorf("%s is longer than %d characters", field, limit))
		}
	}
	text("title", d.Title, maxTitleRunes)
	text("area", d.Area, maxAreaRunes)
	text("summary", d.Summary, maxSummaryRunes)
	if !slices.Contains(draftTypes(), d.Type) {
		errs = append(errs, fmt.Errorf("type %q is not one of %s", d.Type, strings.Join(draftTypes(), ", ")))
	}
	if !slices.Contains(draftPriorities(), d.Priority) {
		errs = append(errs, fmt.Errorf("priority %q is not one of %s", d.Priority, strings.Join(draftPriorities(), ", ")))
	}
	switch {
	case d.Links == nil:
		errs = append(errs, errors.New("links is null; use an empty list"))
	case len(d.Links) > maxLinks:
		errs = append(errs, fmt.Errorf("%d links; at most %d", len(d.Links), maxLinks))
	}
	for i, l := range d.Links {
		if err := checkLink(l); err != nil {
			errs = append(errs, fmt.Errorf("links[%d]: %w", i, err))
		}
	}
	return errs
}

func checkLink(l string) error {
	if len(l) > maxLinkBytes {
		return fmt.Errorf("longer than %d bytes", maxLinkBytes)
	}
	u, err := url.Parse(l)
	if err != nil {
		return fmt.Errorf("not a URL: %v", err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return fmt.Errorf("%q is not an absolute http(s) URL without user information", l)
	}
	return nil
}

// decodeDraft reads a stored draft back, strictly: unknown fields, trailing
// data or a draft that fails Validate are errors, so an effect never writes a
// row from a draft it did not fully understand.
func decodeDraft(raw []byte) (BacklogDraft, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var d BacklogDraft
	if err := dec.Decode(&d); err != nil {
		return BacklogDraft{}, fmt.Errorf("stored draft %q: %w", raw, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return BacklogDraft{}, fmt.Errorf("stored draft %q: trailing data", raw)
	}
	if errs := d.Validate(); len(errs) > 0 {
		return BacklogDraft{}, fmt.Errorf("stored draft %q is invalid: %w", raw, errors.Join(errs...))
	}
	return d, nil
}
