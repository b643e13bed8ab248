package site

import (
	"fmt"
	"strconv"

	"github.com/a-h/templ"

	"github.com/featbench/featbench/metrics"
	"github.com/featbench/featbench/templates"
)

// comparePage lines a split's systems with per-instance results up: any
// two paired (counts and the exact McNemar test for every pair, which
// site.js shows for the two the reader picks; each ranked system against
// the next one without script), pass@k for systems with several attempts,
// and instance by instance. The page carries the outcomes compactly, a
// character per instance and system, and site.js draws a page of rows at
// a time.
func (b *builder) comparePage(bd *board) (templ.Component, error) {
	ds := bd.ds
	u := b.m.u
	c := &templates.ComparePage{
		Page: b.frame(u.compare(ds, bd.split), ds, "Compare systems on "+ds.DisplayName()+" "+bd.split, "Paired and instance-by-instance comparison of systems.",
			templates.Link{Title: "Home", URL: u.base},
			templates.Link{Title: ds.DisplayName(), URL: u.dataset(ds)},
			templates.Link{Title: "Compare " + bd.split}),
		Dataset: ds.DisplayName(), DatasetURL: u.dataset(ds), Split: bd.split,
	}
	ins := ds.SplitInstances(bd.split)
	c.Instances = len(ins)
	d := &c.Data
	if ds.PublishesStatements() {
		d.Base = u.dataset(ds) + "instances/"
	}
	d.IDs = make([]string, len(ins))
	d.Repo = make([]int, len(ins))
	d.Level = make([]int, len(ins))
	repoIdx := map[string]int{}
	for i, in := range ins {
		d.IDs[i] = in.InstanceID
		k, ok := repoIdx[in.Repo]
		if !ok {
			k = len(d.Repos)
			repoIdx[in.Repo] = k
			d.Repos = append(d.Repos, in.Repo)
		}
		d.Repo[i], d.Level[i] = k, in.Level
	}
	var entries []*entry
	var outcomes []metrics.Outcomes
	for _, e := range bd.entries {
		if !e.sub.PerInstance() {
			continue
		}
		entries = append(entries, e)
		sys := templates.CompareSystem{
			Slug: e.sub.Slug, Name: e.sub.Name, URL: u.system(ds, e.sub.Slug), Resolved: e.score.Resolved, Ref: e.ref(),
		}
		if e.score.Multi > 0 {
			sys.Pass1 = pctCell(e.score.ResolvedRate(), 1).Text
		}
		out := make([]byte, len(ins))
		o := metrics.NewOutcomes(len(ins))
		var tries []string // "c/n" per instance, for a system with several attempts
		if e.score.Multi > 0 {
			tries = make([]string, len(ins))
		}
		for i, in := range ins {
			r := e.sub.ResultOf(in)
			switch {
			case r == nil:
				out[i] = '.'
			case r.Resolved:
				out[i] = 'y'
			default:
				out[i] = 'n'
			}
			if r == nil {
				continue
			}
			// Paired on the per-attempt basis the board ranks by.
			o.SetShare(i, metrics.ResolvedShare(r))
			if tries != nil {
				n, k := max(r.Attempts, 1), r.AttemptsResolved
				if r.Attempts <= 1 && r.Resolved {
					k = 1
				}
				tries[i] = strconv.Itoa(k) + "/" + strconv.Itoa(n)
			}
		}
		c.Systems = append(c.Systems, sys)
		d.Outcomes = append(d.Outcomes, string(out))
		d.Tries = append(d.Tries, tries)
		if tries != nil {
			c.PerAttempt = true
		}
		outcomes = append(outcomes, o)
	}
	d.Systems = c.Systems

	// Every pair, for site.js; each ranked system and the next, for the
	// page itself.
	index := map[*entry]int{}
	for i, e := range entries {
		index[e] = i
	}
	pairs := make(map[[2]int]metrics.Pair, len(entries)*(len(entries)-1)/2)
	for i := range entries {
		for j := i + 1; j < len(entries); j++ {
			p, err := metrics.Paired(outcomes[i], outcomes[j])
			if err != nil {
				return nil, fmt.Errorf("comparing %s with %s: %w", entries[i].sub.ID(), entries[j].sub.ID(), err)
			}
			pairs[[2]int{i, j}] = p
			d.Pairs = append(d.Pairs, templates.PairData{
				N: [4]int{p.Both, p.OnlyA, p.OnlyB, p.Neither}, P: pValue(p.PValue()), Low: p.PValue() < 0.05, Attempts: p.Attempts,
			})
		}
	}
	var ranked []int
	for i, e := range entries {
		if !e.ref() {
			ranked = append(ranked, i)
		}
	}
	switch {
	case len(ranked) >= 2:
		d.First, d.Second = ranked[0], ranked[1]
	case len(entries) >= 2:
		d.First, d.Second = 0, 1
	}
	for k := 1; k < len(ranked); k++ {
		i, j := ranked[k-1], ranked[k]
		p := pairs[[2]int{i, j}]
		c.Neighbours = append(c.Neighbours, templates.ComparePair{
			A: c.Systems[i], B: c.Systems[j], RankA: entries[i].row.Rank, RankB: entries[j].row.Rank,
			Both: p.Both, OnlyA: p.OnlyA, OnlyB: p.OnlyB, Neither: p.Neither, Shared: p.Shared(), P: pValue(p.PValue()),
			Attempts: p.Attempts,
		})
	}

	for i, e := range entries {
		if e.sub.Attempts < 2 {
			continue
		}
		st, err := metrics.Attempts(ins, e.sub.ResultOf)
		if err != nil {
			return nil, fmt.Errorf("attempts of %s: %w", e.sub.ID(), err)
		}
		if st.K < 2 {
			continue // a result with one attempt: pass@k is not estimable for k > 1
		}
		a := templates.CompareAttempts{
			System: c.Systems[i], K: st.K, All: st.All, Some: st.Some, None: st.None, Instances: st.Instances,
			Mean: pctCell(st.PassAt[0], 1), SD: pctCell(st.SD, 1),
		}
		for _, p := range st.PassAt {
			a.PassAt = append(a.PassAt, pctCell(p, 1))
		}
		c.Attempts = append(c.Attempts, a)
	}
	return templates.ComparePageView(c), nil
}

// pValue prints a p-value with two significant digits, and tiny ones as
// a bound: no reader needs the digits of 3e-41.
func pValue(p float64) string {
	if p < 0.0001 {
		return "< 0.0001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}
