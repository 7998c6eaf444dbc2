package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/candorkit/candor/retrieval"
)

// The fixed question and the conditions it is answered under.
const (
	question = "Where can I export CSV in Reporting?"
	scope    = "course"
	// answerSource is the source that answers the question, answerChunk
	// the chunk the controlled answer quotes, and answerQuote the exact
	// passage it quotes.
	answerSource = "ACME-EXPORT"
	answerChunk  = answerSource + "#0"
	answerQuote  = "open Reporting > Exports, pick the report and choose Download CSV"
	// inventedChunk replaces answerChunk under -invalid-evidence.
	inventedChunk = "INVENTED#0"
	// searchK is how many hits the search asks for; the corpus admits
	// fewer, so every admitted chunk is a hit.
	searchK = 5
)

// asOf is the fixed date the question is asked on.
func asOf() time.Time { return time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) }

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// decoy is a source that would answer the question (its fixture vector is
// the query itself) but that the policy must refuse before ranking.
type decoy struct {
	ID   string              `json:"source"`
	Want retrieval.Exclusion `json:"reason"`
}

// decoys lists the refused sources of the built-in corpus and why each is
// refused on asOf in scope.
func decoys() []decoy {
	return []decoy{
		{"ACME-EXPORT-2024", retrieval.Expired},
		{"ACME-EXPORT-2027", retrieval.NotYetValid},
		{"ACME-EXPORT-DRAFT", retrieval.NotAdmissible},
		{"ACME-EXPORT-PARTNERS", retrieval.OutOfScope},
	}
}

// builtinCorpus is the agent's knowledge base: the passage that answers the
// question, four decoys that also talk about CSV export, and two unrelated
// passages. Every source is one paragraph, hence one chunk.
func builtinCorpus() []retrieval.Source {
	return []retrieval.Source{
		{
			ID: "ACME-EXPORT", Title: "Exporting report data", Scopes: []string{scope},
			ValidFrom: day(2025, 9, 1), Admissible: true,
			Text: "CSV export lives in Reporting: open Reporting > Exports, pick the report and choose Download CSV. " +
				"The file holds the rows of the report's current filter.",
		},
		{
			ID: "ACME-EXPORT-2024", Title: "Exporting data (2024 edition)", Scopes: []string{scope},
			ValidFrom: day(2024, 1, 1), ValidUntil: day(2025, 9, 1), Admissible: true,
			Text: "CSV export lives in Settings > Data: choose Export all, then CSV.",
		},
		{
			ID: "ACME-EXPORT-2027", Title: "Exporting data (2027 preview)", Scopes: []string{scope},
			ValidFrom: day(2027, 1, 1), Admissible: true,
			Text: "From 2027, CSV export lives in Insights > Downloads.",
		},
		{
			ID: "ACME-EXPORT-DRAFT", Title: "Exporting data (unreviewed draft)", Scopes: []string{scope},
			Admissible: false,
			Text:       "Unreviewed: CSV export might move to Reporting > Data hub > Download CSV.",
		},
		{
			ID: "ACME-EXPORT-PARTNERS", Title: "Partner portal exports", Scopes: []string{"partners"},
			Admissible: true,
			Text:       "In the partner portal, CSV export lives in Reporting > Partner exports > Download CSV.",
		},
		{
			ID: "ACME-DASHBOARDS", Title: "Dashboards", Scopes: []string{scope}, Admissible: true,
			Text: "Dashboards live in Reporting > Dashboards; pin any report to a dashboard with the pin icon.",
		},
		{
			ID: "ACME-ACCOUNTS", Title: "Accounts and roles", Scopes: []string{scope}, Admissible: true,
			Text: "Administrators invite users from Settings > Team and give each of them a role.",
		},
	}
}

// fixtureManifest names the controlled vectors.
func fixtureManifest(corpus []retrieval.Source) retrieval.Manifest {
	return retrieval.Manifest{
		Profile: "fixture", Provider: "fixture", Model: "controlled-2d", ModelVersion: "1", Dims: 2,
		CorpusDigest: retrieval.CorpusDigest(corpus),
	}
}

// fixtureQuery is the controlled query vector.
func fixtureQuery() []float32 { return []float32{1, 0} }

// fixtureVectors places the chunk of ACME-EXPORT at (1,0), exactly where the
// query is, and every other admissible chunk at (0,1), as the controlled
// fixture of docs/examples.md does. It departs from that fixture ("every other chunk
// at (0,1)") for the decoys only: they are placed at (1,0) too, as near as a
// vector can be, so that only the policy keeps them out of the result.
func fixtureVectors(chunks []retrieval.Chunk) [][]float32 {
	near := []string{answerSource}
	for _, d := range decoys() {
		near = append(near, d.ID)
	}
	vs := make([][]float32, len(chunks))
	for i, c := range chunks {
		if slices.Contains(near, c.Source) {
			vs[i] = []float32{1, 0}
		} else {
			vs[i] = []float32{0, 1}
		}
	}
	return vs
}

// controlledProposal is the fixed answer the agent proposes: one exact quote
// from the selected chunk (or from a chunk that does not exist, to show the
// gate refusing it).
func controlledProposal(invalid bool) retrieval.Proposal {
	id := answerChunk
	if invalid {
		id = inventedChunk
	}
	return retrieval.Proposal{Usable: true, Evidence: []retrieval.Evidence{{ChunkID: id, Quote: answerQuote}}}
}

// proposeDraft turns an accepted answer into the backlog item to approve.
func proposeDraft(ans retrieval.Answer) BacklogDraft {
	return BacklogDraft{
		Title:    "Review Reporting CSV export",
		Type:     "Question",
		Priority: "medium",
		Area:     "Reporting",
		Summary:  ans.Text,
		Links:    []string{},
	}
}

// fixtureLayout checks the controlled vectors against what run prints about
// them, and returns that line: the ACME-EXPORT chunk at (1,0), every other
// chunk the policy admits at (0,1), and every chunk it refuses at (1,0).
func fixtureLayout(corpus []retrieval.Source, chunks []retrieval.Chunk, vectors [][]float32, policy retrieval.CorpusPolicy) (string, error) {
	if len(vectors) != len(chunks) {
		return "", fmt.Errorf("fixture check: %d vectors for %d chunks", len(vectors), len(chunks))
	}
	admitted, refused := 0, 0
	for i, c := range chunks {
		j := slices.IndexFunc(corpus, func(s retrieval.Source) bool { return s.ID == c.Source })
		if j < 0 {
			return "", fmt.Errorf("fixture check: chunk %s of no source", c.ID)
		}
		want, what := []float32{0, 1}, "an admissible chunk"
		switch {
		case c.Source == answerSource:
			want, what = fixtureQuery(), "the answer's chunk"
		case policy.Check(corpus[j]) != retrieval.Admitted:
			want, what = fixtureQuery(), "a refused decoy"
			refused++
		default:
			admitted++
		}
		if !slices.Equal(vectors[i], want) {
			return "", fmt.Errorf("fixture check: %s is %s but sits at %v, want %v", c.ID, what, vectors[i], want)
		}
	}
	return fmt.Sprintf("Vectors: %s at (1,0) and the %d other admissible chunks at (0,1), as in the controlled fixture of docs/examples.md; "+
		"unlike it, the %d refused decoys are deliberately at (1,0) too, on the query, so that the policy, not the vector, keeps them out",
		answerSource, admitted, refused), nil
}

// checkPolicy confirms what the fixture is built to show: every decoy is
// refused by the policy for its own reason, and none reached the hits. A
// violation is a bug in the index or in the corpus, never something to
// answer from.
func checkPolicy(corpus []retrieval.Source, policy retrieval.CorpusPolicy, hits []retrieval.Hit) error {
	for _, d := range decoys() {
		i := slices.IndexFunc(corpus, func(s retrieval.Source) bool { return s.ID == d.ID })
		if i < 0 {
			return fmt.Errorf("policy check: decoy %s is missing from the corpus", d.ID)
		}
		if got := policy.Check(corpus[i]); got != d.Want {
			return fmt.Errorf("policy check: source %s: policy says %q, want %q", d.ID, got, d.Want)
		}
		for _, h := range hits {
			if h.SourceID == d.ID {
				return fmt.Errorf("policy check: refused source %s reached the hits as %s", d.ID, h.ChunkID)
			}
		}
	}
	return nil
}
