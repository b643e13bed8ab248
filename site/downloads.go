package site

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/featbench/featbench/templates"
)

// A leaderboard's downloads, for analysis: one row per system with figures
// as numbers (not as printed), interval bounds in columns of their own,
// missing figures empty (CSV) or null (JSON). docs/downloads.md documents
// every column.

// boardRecord is one system on a board, as the downloads give it.
type boardRecord struct {
	Rank          *int     `json:"rank"` // null for a reference row
	RankLow       *int     `json:"rank_ci95_low"`
	RankHigh      *int     `json:"rank_ci95_high"`
	Reference     bool     `json:"reference"`
	System        string   `json:"system"`
	Slug          string   `json:"slug"`
	Scaffold      string   `json:"scaffold"`
	Model         string   `json:"model"`
	Organisations []string `json:"organisations"`
	Resolved      *float64 `json:"resolved_pct"`
	ResolvedLow   *float64 `json:"resolved_ci95_low"`
	ResolvedHigh  *float64 `json:"resolved_ci95_high"`
	CIDerived     bool     `json:"resolved_ci95_derived"` // from a reported rate and the split's size, not from results
	Passed        *float64 `json:"passed_pct"`
	L1Resolved    *float64 `json:"l1_resolved_pct"`
	L1Passed      *float64 `json:"l1_passed_pct"`
	L2Resolved    *float64 `json:"l2_resolved_pct"`
	L2Passed      *float64 `json:"l2_passed_pct"`
	FV            *float64 `json:"fv_pct"`
	RT            *float64 `json:"rt_pct"`
	File          *float64 `json:"file_pct"`
	TokensIn      *float64 `json:"tokens_in"`
	TokensOut     *float64 `json:"tokens_out"`
	Cost          *float64 `json:"cost_per_instance"`
	TokensN       *int     `json:"results_with_tokens"`
	CostN         *int     `json:"results_with_cost"`
	Turns         *float64 `json:"turns"` // mean model requests per instance
	TurnsN        *int     `json:"results_with_turns"`
	Date          string   `json:"date"`
	OpenScaffold  bool     `json:"open_scaffold"`
	OpenWeights   bool     `json:"open_weights"`
	Checked       bool     `json:"checked"`
	Attempts      int      `json:"attempts"`
	PassAtK       *float64 `json:"pass_at_k_pct"` // resolved by any attempt, with attempts > 1: resolved_pct is then the mean over attempts
	Tags          []string `json:"tags"`
	Reported      bool     `json:"reported"`
	Source        string   `json:"source"`
	URL           string   `json:"url"` // the system's page
}

// boardColumns are the CSV header, in boardRecord's order.
var boardColumns = []string{"rank", "rank_ci95_low", "rank_ci95_high", "reference", "system", "slug", "scaffold", "model", "organisations",
	"resolved_pct", "resolved_ci95_low", "resolved_ci95_high", "resolved_ci95_derived", "passed_pct",
	"l1_resolved_pct", "l1_passed_pct", "l2_resolved_pct", "l2_passed_pct", "fv_pct", "rt_pct", "file_pct",
	"tokens_in", "tokens_out", "cost_per_instance", "results_with_tokens", "results_with_cost", "turns", "results_with_turns",
	"date", "open_scaffold", "open_weights", "checked", "attempts", "pass_at_k_pct", "tags", "reported", "source", "url"}

// value is a cell's number at the precision the downloads give: reported
// figures exactly as published, computed percentages to two decimals,
// token means to whole tokens, costs to a hundredth of a cent.
func value(c templates.Cell, decimals int) *float64 {
	if c.Missing || math.IsNaN(c.Sort) || math.IsInf(c.Sort, 0) {
		return nil
	}
	v := c.Sort
	if decimals >= 0 {
		v = round(v, decimals)
	}
	return &v
}

func records(v *templates.Board, absolute func(string) string) []boardRecord {
	rows := append(append([]templates.Row(nil), v.Rows...), v.References...)
	out := make([]boardRecord, 0, len(rows))
	for _, r := range rows {
		// Computed figures are rounded; reported ones are kept as given.
		pct, tok, cost := 2, 0, 4
		if r.Reported {
			pct, tok, cost = -1, -1, -1
		}
		rec := boardRecord{
			Reference: r.Reference, System: r.Name, Slug: r.Slug, Scaffold: r.Scaffold, Model: r.Model,
			Organisations: orgNames(r.Orgs),
			Resolved:      value(r.Resolved, pct), Passed: value(r.Passed, pct),
			L1Resolved: value(r.L1Resolved, pct), L1Passed: value(r.L1Passed, pct),
			L2Resolved: value(r.L2Resolved, pct), L2Passed: value(r.L2Passed, pct),
			FV: value(r.FV, pct), RT: value(r.RT, pct), File: value(r.File, pct),
			TokensIn: value(r.TokensIn, tok), TokensOut: value(r.TokensOut, tok), Cost: value(r.Cost, cost), Turns: value(r.Turns, 1),
			Date: r.Date, OpenScaffold: r.OpenScaffold, OpenWeights: r.OpenWeights, Checked: r.Checked,
			Attempts: r.Attempts, PassAtK: value(r.AnyResolved, pct), Tags: r.Tags, Reported: r.Reported, Source: r.Source, URL: absolute(r.URL),
		}
		if rec.Tags == nil {
			rec.Tags = []string{}
		}
		if !r.Reference {
			rank := r.Rank
			rec.Rank = &rank
		}
		if r.RankHi > 0 {
			lo, hi := r.RankLo, r.RankHi
			rec.RankLow, rec.RankHigh = &lo, &hi
		}
		if r.HasCI {
			lo, hi := r.ResolvedLo, r.ResolvedHi
			rec.ResolvedLow, rec.ResolvedHigh, rec.CIDerived = &lo, &hi, r.CIDerived
		}
		if !r.Reported {
			tn, cn, un := r.TokensN, r.CostN, r.TurnsN
			rec.TokensN, rec.CostN, rec.TurnsN = &tn, &cn, &un
		}
		out = append(out, rec)
	}
	return out
}

func orgNames(orgs []templates.Org) []string {
	out := make([]string, 0, len(orgs))
	for _, o := range orgs {
		out = append(out, o.Name)
	}
	return out
}

// boardCSV is a leaderboard as CSV, one row per system.
func boardCSV(v *templates.Board, absolute func(string) string) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(boardColumns); err != nil {
		return nil, err
	}
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	i := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	for _, r := range records(v, absolute) {
		row := []string{i(r.Rank), i(r.RankLow), i(r.RankHigh), strconv.FormatBool(r.Reference), text(r.System), text(r.Slug), text(r.Scaffold), text(r.Model),
			text(strings.Join(r.Organisations, "; ")),
			f(r.Resolved), f(r.ResolvedLow), f(r.ResolvedHigh), strconv.FormatBool(r.CIDerived), f(r.Passed),
			f(r.L1Resolved), f(r.L1Passed), f(r.L2Resolved), f(r.L2Passed), f(r.FV), f(r.RT), f(r.File),
			f(r.TokensIn), f(r.TokensOut), f(r.Cost), i(r.TokensN), i(r.CostN), f(r.Turns), i(r.TurnsN),
			r.Date, strconv.FormatBool(r.OpenScaffold), strconv.FormatBool(r.OpenWeights), strconv.FormatBool(r.Checked),
			strconv.Itoa(r.Attempts), f(r.PassAtK), text(strings.Join(r.Tags, "; ")), strconv.FormatBool(r.Reported), text(r.Source), text(r.URL)}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// text defuses a text cell a spreadsheet would run as a formula: a cell
// that starts with =, +, -, @, a tab or a carriage return gets a leading
// apostrophe (OWASP's advice for CSV injection). Numbers are never text.
func text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// boardJSON is a leaderboard as one JSON document.
func boardJSON(v *templates.Board, absolute func(string) string) ([]byte, error) {
	doc := struct {
		Dataset   string        `json:"dataset"`
		Split     string        `json:"split"`
		Instances int           `json:"instances"`
		RankBy    string        `json:"rank_by"`
		Rows      []boardRecord `json:"rows"`
	}{Dataset: v.Dataset, Split: v.Split, Instances: v.Size, RankBy: v.RankBy, Rows: records(v, absolute)}
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding board: %w", err)
	}
	return append(raw, '\n'), nil
}
