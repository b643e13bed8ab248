package site

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sync/errgroup"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/templates"
)

// A submission's trajectories.tar.gz (what `eval infer` recorded, packed
// by `eval submit`) becomes one page per trajectory, linked from the
// instance page's row of the system, with the raw JSONL beside it. The
// archive's entries were checked and indexed by bench.Load; their names
// become paths only through that index.

// trajectory is a trajectory's page; its raw file is beside it.
func (u urls) trajectory(s *bench.Submission, t *bench.Trajectory) string {
	return u.system(s.Dataset, s.Slug) + s.Split + "/trajectories/" + t.URLPath() + "/"
}

// trajectoryIndex maps each submission's trajectories by instance, by
// attempt (one each: Load refuses an entry twice), for the instance
// pages: thousands of pages times every system.
func trajectoryIndex(subs []*bench.Submission) map[*bench.Submission]map[string][]*bench.Trajectory {
	out := map[*bench.Submission]map[string][]*bench.Trajectory{}
	for _, s := range subs {
		if len(s.Trajectories) == 0 || s.Dataset.KeepsStatementsPrivate() {
			continue
		}
		m := map[string][]*bench.Trajectory{}
		for i := range s.Trajectories {
			t := &s.Trajectories[i]
			m[t.InstanceID] = append(m[t.InstanceID], t)
		}
		for _, ts := range m {
			slices.SortFunc(ts, func(a, b *bench.Trajectory) int { return cmp.Compare(a.Attempt, b.Attempt) })
		}
		out[s] = m
	}
	return out
}

// trajectoryLinks link a submission's trajectories of an instance, by
// attempt.
func (b *builder) trajectoryLinks(s *bench.Submission, id string) []templates.Link {
	ts := b.trajs[s][id]
	if len(ts) == 0 {
		return nil
	}
	out := make([]templates.Link, 0, len(ts))
	for _, t := range ts {
		title := "trajectory"
		if s.Attempts > 1 {
			title = "attempt " + strconv.Itoa(t.Attempt)
		}
		out = append(out, templates.Link{Title: title, URL: b.m.u.trajectory(s, t)})
	}
	return out
}

// trajectoryPages are the trajectory pages, for the sitemap and the
// report: writeTrajectories writes them.
func (b *builder) trajectoryPages() []page {
	var out []page
	for _, s := range b.data.Submissions {
		if s.Dataset.KeepsStatementsPrivate() {
			continue
		}
		for i := range s.Trajectories {
			out = append(out, page{url: b.m.u.trajectory(s, &s.Trajectories[i]), html: true})
		}
	}
	return out
}

// trajectoryShell is a trajectory page's view but for its exchanges,
// which come from the trajectory's bytes: the page's key hashes this and
// the trajectory's SHA-256.
func (b *builder) trajectoryShell(s *bench.Submission, t *bench.Trajectory) *templates.TrajectoryPage {
	ds, u := s.Dataset, b.m.u
	url := u.trajectory(s, t)
	attempt := "attempt " + strconv.Itoa(t.Attempt)
	return &templates.TrajectoryPage{
		Page: b.frame(url, ds, "Trajectory of "+s.Name+" on "+t.InstanceID+", "+attempt,
			"The exchanges between "+s.Name+" and its model on task instance "+t.InstanceID+" of "+ds.DisplayName()+", as eval infer recorded them.",
			templates.Link{Title: "Home", URL: u.base},
			templates.Link{Title: ds.DisplayName(), URL: u.dataset(ds)},
			templates.Link{Title: s.Name, URL: u.system(ds, s.Slug)},
			templates.Link{Title: t.InstanceID, URL: u.instance(ds, t.InstanceID)},
			templates.Link{Title: attempt}),
		System: s.Name, SystemURL: u.system(ds, s.Slug),
		Instance: t.InstanceID, InstanceURL: u.instance(ds, t.InstanceID),
		Dataset: ds.DisplayName(), Split: s.Split, Attempt: t.Attempt,
		RawURL: url + bench.TrajectoryFile, RawSize: humanBytes(t.Size),
		Limits: trajectoryLimits,
	}
}

// rawKey is the key of a raw trajectory file: its bytes, by their SHA-256.
func rawKey(t *bench.Trajectory) uint64 {
	if k := xxhash.Sum64String("trajectory " + t.SHA256); k != 0 {
		return k
	}
	return 1
}

// maxTrajectoryArchives bounds how many archives are read at once: each
// holds one trajectory in memory (up to 64 MiB) and its decoded lines.
const maxTrajectoryArchives = 2

// writeTrajectories writes every trajectory's page and raw file. A page
// or file whose key is the last build's is kept without reading the
// archive; an archive is read, once, as a stream, only for those that
// changed.
func (b *builder) writeTrajectories(ctx context.Context, out *output) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(maxTrajectoryArchives)
	for _, s := range b.data.Submissions {
		if len(s.Trajectories) == 0 || s.Dataset.KeepsStatementsPrivate() {
			continue
		}
		g.Go(func() error { return b.writeSubmissionTrajectories(ctx, out, s) })
	}
	return g.Wait()
}

func (b *builder) writeSubmissionTrajectories(ctx context.Context, out *output, s *bench.Submission) error {
	type job struct {
		view              *templates.TrajectoryPage
		pageRel, rawRel   string
		key               uint64
		pageKept, rawKept bool
	}
	jobs := map[*bench.Trajectory]*job{}
	for i := range s.Trajectories {
		t := &s.Trajectories[i]
		j := &job{view: b.trajectoryShell(s, t)}
		url := b.m.u.trajectory(s, t)
		j.pageRel, j.rawRel = b.rel(url), b.rel(url+bench.TrajectoryFile)
		key, err := viewKey(b.key, j.view, []byte(t.SHA256))
		if err != nil {
			key = 0 // no key: rendered every time
		}
		j.key = key
		if j.pageKept, err = out.reuseKeyed(j.pageRel, key); err != nil {
			return err
		}
		if j.rawKept, err = out.reuseKeyed(j.rawRel, rawKey(t)); err != nil {
			return err
		}
		if !j.pageKept || !j.rawKept {
			jobs[t] = j
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	err := s.ReadTrajectories(func(t *bench.Trajectory) bool { return jobs[t] != nil }, func(t *bench.Trajectory, data []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		j := jobs[t]
		if !j.rawKept {
			if err := out.writeContent(j.rawRel, content{data: data}, rawKey(t)); err != nil {
				return err
			}
		}
		if j.pageKept {
			return nil
		}
		var r trajectoryReader
		v := j.view
		v.Exchanges, v.Omitted = r.exchanges(data)
		v.Turns, v.Usage = r.turns, r.totalUsage()
		var buf bytes.Buffer
		if err := templates.TrajectoryPageView(v).Render(ctx, &buf); err != nil {
			return fmt.Errorf("rendering the trajectory page of %s in %s: %w", t.Name, s.ID(), err)
		}
		return out.writeContent(j.pageRel, content{data: buf.Bytes()}, j.key)
	})
	if err != nil {
		return fmt.Errorf("the trajectories of %s: %w", s.ID(), err)
	}
	return nil
}
