package collect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/atomicfile"
	"github.com/featbench/featbench/internal/pybase"
	"github.com/featbench/featbench/internal/registry"
)

// candidateInstance is a verified instance with the repository and file it
// came from, before the full-set filters.
type candidateInstance struct {
	in   *bench.Instance
	file string
	pull int // a history-based method's pull request
}

// gather turns the verified candidates into instances with statements.
func (r *repoRun) gather() {
	for _, c := range r.cands {
		for _, l := range []int{1, 2} {
			if !r.wantLevel(l) || !c.has(l) {
				continue
			}
			st := c.stmt.L1
			if l == 2 {
				st = c.stmt.L2
			}
			if st == "" {
				// Never silently: a verified level without a statement
				// is reported.
				r.drop(c, StageStatements, l, "no problem statement was written for this level")
				continue
			}
			in := r.instance(c, l)
			in.ProblemStatement = st
			chk := c.verify.L1
			if l == 2 {
				chk = c.verify.L2
			}
			if chk != nil {
				in.Canaries, in.GoldAudit = chk.Canaries, chk.GoldAudit
			}
			r.res.instances = append(r.res.instances, &candidateInstance{in: in, file: c.File})
		}
		r.res.report.Drops = append(r.res.report.Drops, c.Drops...)
	}
	r.res.env = r.env
}

// refuseExisting refuses to write over a dataset version.
func refuseExisting(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%s exists: a dataset version is never overwritten; choose a new version", dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// filterInstance applies the full-set filters (paper 000, section 3.3):
// enough gold lines, enough fail-to-pass tests, a test file first
// committed on or after the configured date. It returns why an instance
// is left out, or "".
func filterInstance(ci *candidateInstance, minLines, minF2P int, earliest string) string {
	in := ci.in
	if in.Lines != nil && *in.Lines < minLines {
		return fmt.Sprintf("the gold patch adds %d lines (min_lines %d)", *in.Lines, minLines)
	}
	if len(in.FailToPass) < minF2P {
		return fmt.Sprintf("%d fail-to-pass tests (min_f2p_points %d)", len(in.FailToPass), minF2P)
	}
	if earliest != "" {
		if in.CreatedAt == "" {
			return "the test file's first commit is not known (earliest_test_date is set)"
		}
		if in.CreatedAt[:min(10, len(in.CreatedAt))] < earliest {
			return fmt.Sprintf("the test file was first committed on %s (earliest_test_date %s)", in.CreatedAt[:10], earliest)
		}
	}
	return ""
}

// sample draws n of the ids at random, seeded, and returns them sorted.
// All of them when there are n or fewer.
func sample(ids []string, n int, rng *rand.Rand) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	if n < len(out) {
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		out = out[:n]
		sort.Strings(out)
	}
	return out
}

// manifest is dataset.toml as collection writes it.
type manifest struct {
	Name        string          `toml:"name"`
	Title       string          `toml:"title"`
	Version     string          `toml:"version"`
	Description string          `toml:"description"`
	Layout      string          `toml:"layout"`
	Level2      string          `toml:"level2"`
	Statements  string          `toml:"statements,omitempty"`
	Repos       []manifestRepo  `toml:"repositories"`
	Splits      []manifestSplit `toml:"splits"`
}

type manifestRepo struct {
	Name        string            `toml:"name"`
	URL         string            `toml:"url,omitempty"`
	License     string            `toml:"license,omitempty"`
	Source      bench.Source      `toml:"source"`
	Environment bench.Environment `toml:"environment"`
}

type manifestSplit struct {
	Name        string   `toml:"name"`
	Description string   `toml:"description"`
	Instances   []string `toml:"instances,omitempty"`
	Size        int      `toml:"size,omitempty"` // preflight's stand-in for the instances
}

// manifestRepoOf is a repository's entry in dataset.toml: where its code
// comes from and how it is installed, on the base of which Python, so
// that cmd/eval builds the environment collection verified on.
//
// A networked environment's entry says so and gives env's indexes,
// cut-off and lock (env is zero before collection: the preflight checks
// the rest).
func manifestRepoOf(rc config.Repo, env envOut) manifestRepo {
	python := rc.Python
	if b, ok := pybase.Lookup(python); ok {
		python = b.Python // "" named the default
	}
	mr := manifestRepo{Name: rc.Repository, URL: rc.URL, License: rc.License,
		Environment: bench.Environment{Python: python, Packages: rc.Packages, PreInstall: rc.PreInstall, Install: rc.Install}}
	if rc.Network == config.NetworkBuild {
		mr.Environment.Network = bench.NetworkBuild
		mr.Environment.IndexURL, mr.Environment.ExtraIndexURL = env.IndexURL, env.ExtraIndexURL
		mr.Environment.ExcludeNewer, mr.Environment.Lock = env.ExcludeNewer, env.Lock
	}
	if rc.BaseImage != "" {
		// The base as pulled, pinned by digest (the env stage's): the
		// Python is the image's, not a Debian base's.
		mr.Environment.BaseImage, mr.Environment.Python = env.Base, ""
	}
	if rc.Commit == "" {
		mr.Source.Path = filepath.ToSlash(rc.Source)
	} else {
		mr.Source.Git, mr.Source.Commit = rc.Source, rc.Commit
	}
	return mr
}

// newManifest is the dataset version's manifest, without its splits.
func newManifest(o Options, name, version string, repos []manifestRepo) manifest {
	m := manifest{
		Name: name, Title: o.Config.Collect.Title, Version: version, Description: o.Config.Collect.Description,
		Layout: bench.LayoutComplete, Level2: bench.Level2AgentCode, Statements: o.Config.Collect.Statements, Repos: repos,
	}
	if m.Title == "" {
		m.Title = name
	}
	if m.Description == "" {
		m.Description = fmt.Sprintf("Feature-implementation tasks collected by cmd/collect from %d repositories with %s.", len(repos), methodsText(o.Config.Collect.Repos))
	}
	return m
}

// methodNames name the collection methods in a dataset's description.
var methodNames = map[string]string{
	config.MethodTestDriven:    "FeatureBench's test-driven method",
	config.MethodRelease:       "FeatBench's release-driven method",
	config.MethodNewComponents: "FEA-Bench's new-components method",
}

// methodsText names the methods the repositories are collected with, in
// the order of the methods' table.
func methodsText(repos []config.Repo) string {
	var names []string
	for _, m := range []string{config.MethodTestDriven, config.MethodRelease, config.MethodNewComponents} {
		if slices.ContainsFunc(repos, func(r config.Repo) bool { return r.MethodOrDefault() == m }) {
			names = append(names, methodNames[m])
		}
	}
	if len(names) == 0 {
		return methodNames[config.MethodTestDriven]
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// encodeManifest is the text of dataset.toml.
func encodeManifest(m manifest, release string) (string, error) {
	var mb bytes.Buffer
	mb.WriteString("# Written by cmd/collect: do not edit by hand; collect a new version instead.\n")
	enc := toml.NewEncoder(&mb)
	enc.Indent = ""
	if err := enc.Encode(m); err != nil {
		return "", fmt.Errorf("encoding the manifest: %w", err)
	}
	// The date goes in as a TOML local date, after the version.
	return strings.Replace(mb.String(), "version = ", "release_date = "+release+"\nversion = ", 1), nil
}

var errNoRelease = errors.New("no release date: set release_date in [collect] (a dataset from folders alone has no commit date to take)")

// preflight checks, before any work, what writing the dataset needs of
// the configuration alone, so that a collection does not fail at its end
// for a reason known at its start: a release date to take, a version
// neither in the data folder nor in its lock, and the manifest's fields
// (title, description, each repository's source and environment) as the
// data model checks them.
func preflight(o Options, out, key string, repos []config.Repo) error {
	if err := refuseExisting(out); err != nil {
		return err
	}
	release := o.Config.Collect.ReleaseDate
	if release == "" {
		if !slices.ContainsFunc(repos, func(rc config.Repo) bool { return rc.Commit != "" }) {
			return errNoRelease
		}
		release = "2000-01-01" // a stand-in: the commits give it at the end
	}
	name, version, _ := strings.Cut(key, "/")
	var mrs []manifestRepo
	seen := map[string]bool{}
	for _, rc := range repos {
		if seen[rc.Repository] {
			continue // another method's table of the same repository
		}
		seen[rc.Repository] = true
		var env envOut
		if rc.BaseImage != "" {
			// A stand-in for the digest the env stage will pin.
			if r, err := registry.Parse(rc.BaseImage); err == nil {
				if p, err := r.WithDigest("sha256:" + strings.Repeat("0", 64)); err == nil {
					env.Base = p.String()
				}
			}
		}
		mrs = append(mrs, manifestRepoOf(rc, env))
	}
	m := newManifest(o, name, version, mrs)
	m.Splits = []manifestSplit{{Name: "full", Description: "Every instance that passed collection and the full-set filters.", Size: 1}}
	text, err := encodeManifest(m, release)
	if err != nil {
		return err
	}
	dataDir := filepath.Dir(filepath.Dir(filepath.Dir(out)))
	_, e, err := bench.CheckDatasetFiles(dataDir, key, map[string][]byte{bench.ManifestFile: []byte(text)})
	if err != nil {
		return fmt.Errorf("featbench.toml's [collect] tables make a dataset.toml the data model refuses (checked before collecting; the fields are dataset.toml's, from the keys of the same names): %w", err)
	}
	if _, err := bench.AddToLock(dataDir, e); err != nil {
		return fmt.Errorf("publishing %s: %w", key, err)
	}
	return nil
}

// writeDataset applies the filters, samples the splits and writes the
// dataset version, checked in memory by the data model's loader before
// anything of it is written, then moved into place whole.
func writeDataset(ctx context.Context, o Options, out, name, version string, results []*repoResult, rep *Report) error {
	var kept []*bench.Instance
	var repos []manifestRepo
	release := o.Config.Collect.ReleaseDate
	for _, res := range results {
		rc := res.rc
		n := 0
		for _, ci := range res.instances {
			if why := filterInstance(ci, rc.MinLines, rc.MinF2PPoints, rc.EarliestTestDate); why != "" {
				line, _ := summary(why) // one line, as every reason
				d := Drop{File: ci.file, Level: ci.in.Level, Stage: StageDataset, Reason: line, Pull: ci.pull}
				if ci.pull > 0 {
					d.Level = 0 // one instance per pull request
				}
				res.report.Drops = append(res.report.Drops, d)
				continue
			}
			kept = append(kept, ci.in)
			n++
		}
		res.report.Kept = n
		if res.report.Method != "" {
			res.report.Funnel = append(res.report.Funnel, bench.CollectionStep{Step: "kept", Count: n})
		}
		sort.SliceStable(res.report.Drops, func(i, j int) bool {
			a, b := res.report.Drops[i], res.report.Drops[j]
			if a.File != b.File {
				return a.File < b.File
			}
			if a.Pull != b.Pull {
				return a.Pull < b.Pull
			}
			return a.Level < b.Level
		})
		// A repository collected with several methods (one table each, the
		// same source and environment) is one repository of the dataset.
		if mr := manifestRepoOf(rc, res.env); !slices.ContainsFunc(repos, func(r manifestRepo) bool { return r.Name == mr.Name }) {
			repos = append(repos, mr)
		}
		if release == "" && rc.Commit != "" {
			if d := commitDate(ctx, o.Root, rc.Source, rc.Commit); d > release {
				release = d
			}
		}
	}
	rep.filtered = true
	if release == "" {
		return errNoRelease
	}
	if len(kept) == 0 {
		return errors.New("no instance passed every stage and filter: nothing to write (see the drops above)")
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].InstanceID < kept[j].InstanceID })
	ids := make([]string, len(kept))
	for i, in := range kept {
		ids[i] = in.InstanceID
	}
	m := newManifest(o, name, version, repos)
	rep.Splits = map[string]int{"full": len(ids)}
	m.Splits = append(m.Splits, manifestSplit{Name: "full", Description: "Every instance that passed collection and the full-set filters.", Instances: ids})
	for _, s := range []struct {
		name string
		n    int
	}{{"lite", o.Config.Collect.Lite}, {"fast", o.Config.Collect.Fast}} {
		if s.n <= 0 {
			continue
		}
		pick := sample(ids, s.n, itemRand(o.Seed, "split", s.name))
		rep.Splits[s.name] = len(pick)
		m.Splits = append(m.Splits, manifestSplit{Name: s.name, Description: fmt.Sprintf("%d instances of the full split drawn at random (seed %d).", len(pick), o.Seed), Instances: pick})
	}
	rep.Instances = len(kept)

	manifestText, err := encodeManifest(m, release)
	if err != nil {
		return err
	}
	var ib bytes.Buffer
	for _, in := range kept {
		raw, err := in.JSON()
		if err != nil {
			return fmt.Errorf("encoding %s: %w", in.InstanceID, err)
		}
		ib.Write(raw)
		ib.WriteByte('\n')
	}
	for _, res := range results {
		rep.Repos = replaceRepo(rep.Repos, res.report)
	}
	coll, err := json.MarshalIndent(rep.Collection, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", bench.CollectionFile, err)
	}
	files := map[string][]byte{
		bench.ManifestFile:   []byte(manifestText),
		bench.InstancesFile:  ib.Bytes(),
		bench.CollectionFile: append(coll, '\n'),
	}

	// Checked in memory by the data model's own loader, as the site and
	// cmd/eval will load it, and against the lock, before anything is
	// written: a collection that got this far does not fail at the end
	// for want of a check.
	key := name + "/" + version
	dataDir := filepath.Dir(filepath.Dir(filepath.Dir(out)))
	_, entry, err := bench.CheckDatasetFiles(dataDir, key, files)
	if err != nil {
		return fmt.Errorf("the dataset fails the data model's checks, so nothing was written (a bug in cmd/collect; the stages' outputs stay in the work folder): %w", err)
	}
	lock, err := bench.AddToLock(dataDir, entry)
	if err != nil {
		return fmt.Errorf("publishing %s: %w", key, err)
	}
	return publish(dataDir, key, out, files, lock)
}

// stagePrefix names the folder a version is written into before it is
// moved into place: "<data folder>.collect-<pid>", beside the data folder,
// so that a run killed while writing leaves nothing the loader reads (the
// next run removes it), and on the same file system, so that the move is
// one rename.
const stagePrefix = ".collect-"

// publish writes the files of the dataset version key, checked already,
// into a staging folder, moves it to out and writes lock, the data
// folder's lock with the version's entry added: both or neither, so that
// a version collect wrote is published and no later change to it goes
// unnoticed. Nothing half-written is left in the data folder: the folders
// made for out are removed again when the move or the lock fails.
func publish(dataDir, key, out string, files map[string][]byte, lock []byte) error {
	stage := filepath.Clean(dataDir) + stagePrefix + strconv.Itoa(os.Getpid())
	sweepStages(dataDir)
	// A folder of our pid can only be a killed run's.
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("removing an unfinished run's folder: %w", err)
	}
	defer os.RemoveAll(stage)
	dir := filepath.Join(stage, filepath.Base(out))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("staging %s: %w", key, err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := atomicfile.Write(filepath.Join(dir, name), files[name]); err != nil {
			return fmt.Errorf("staging %s: %w", key, err)
		}
	}
	if err := refuseExisting(out); err != nil {
		return err
	}
	undo, err := mkdirs(filepath.Dir(out))
	if err != nil {
		return fmt.Errorf("dataset folder: %w", err)
	}
	if err := os.Rename(dir, out); err != nil {
		undo()
		return fmt.Errorf("moving the dataset into place: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dataDir, bench.LockFile), lock); err != nil {
		// Unpublished, the version could change unnoticed: take it back.
		if rerr := os.Rename(out, dir); rerr != nil {
			return fmt.Errorf("publishing %s: %w; %s stays in place unpublished (%v): add the entry `go run ./cmd/build --lock %s` prints", key, err, out, rerr, key)
		}
		undo()
		return fmt.Errorf("publishing %s: %w", key, err)
	}
	return nil
}

// sweepStages removes the staging folders of runs that were killed (their
// process is gone) beside the data folder.
func sweepStages(dataDir string) {
	base := filepath.Clean(dataDir)
	entries, _ := os.ReadDir(filepath.Dir(base))
	prefix := filepath.Base(base) + stagePrefix
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(rest)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue // not a staging folder, ours, or a live run's
		}
		_ = os.RemoveAll(filepath.Join(filepath.Dir(base), e.Name())) // best effort: it is outside the data folder
	}
}

// mkdirs makes dir and its missing parents, and returns what removes the
// ones it made (when they are still empty).
func mkdirs(dir string) (undo func(), err error) {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	undo = func() {
		for _, d := range made { // deepest first
			_ = os.Remove(d)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		undo()
		return nil, err
	}
	return undo, nil
}

func replaceRepo(list []*RepoReport, r *RepoReport) []*RepoReport {
	for i, x := range list {
		// One repository may be collected by several methods, a report each.
		if x.Repository == r.Repository && x.Method == r.Method {
			list[i] = r
			return list
		}
	}
	return append(list, r)
}

// commitDate is a commit's date (YYYY-MM-DD, UTC), or "" when git cannot
// tell.
func commitDate(ctx context.Context, root, src, commit string) string {
	if !filepath.IsAbs(src) && !strings.Contains(src, "://") {
		src = filepath.Join(root, src)
	}
	out, err := gitOutput(ctx, src, "show", "-s", "--format=%cI", commit)
	if err != nil {
		return ""
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(out))
	if err != nil {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

// Publish writes the files of the dataset version key (NAME/VERSION) into
// dataDir, as a collection writes its own: checked first by the data
// model's loader and against the data folder's lock (nothing is written
// when they fail), never over an existing version, moved into place whole
// and added to the lock. `collect import` writes what it converted with it.
func Publish(dataDir, key string, files map[string][]byte) error {
	out := filepath.Join(dataDir, "datasets", filepath.FromSlash(key))
	if err := refuseExisting(out); err != nil {
		return err
	}
	_, entry, err := bench.CheckDatasetFiles(dataDir, key, files)
	if err != nil {
		return fmt.Errorf("the dataset fails the data model's checks, so nothing was written: %w", err)
	}
	lock, err := bench.AddToLock(dataDir, entry)
	if err != nil {
		return fmt.Errorf("publishing %s: %w", key, err)
	}
	return publish(dataDir, key, out, files, lock)
}
