// Package site renders data/ into the static benchmark site: leaderboards,
// dataset, repository, system and instance pages, charts, downloads, feed
// and sitemap. It reads data only through the bench package, lays pages
// out only through the templates package and turns statements and patches
// into HTML only through the markup package.
package site

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	"github.com/cespare/xxhash/v2"
	"golang.org/x/sync/errgroup"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/markup"
	"github.com/featbench/featbench/templates"
)

// Options says where a build reads from and writes to.
type Options struct {
	Root   string      // project root: featbench.toml, data/, package.json
	Config config.Site // the [site] table of featbench.toml
	// ConfigBytes is the raw featbench.toml, part of the input fingerprint.
	ConfigBytes []byte
	// ConfigPath is the featbench.toml read, which --serve reads again
	// when it changes; default <Root>/featbench.toml.
	ConfigPath string
	// CacheDir holds the npm install of the chart library; default
	// <Root>/.cache/npm.
	CacheDir string
	// StateDir holds what each build published, per output folder, kept
	// out of the output so that it is never published; default
	// <Root>/.cache/build.
	StateDir string
	// RequireLocalCharts makes a missing npm an error instead of a fall
	// back to the CDN copy: CI and the browser test run offline.
	RequireLocalCharts bool
	// Now is the build date shown in the footer; default today.
	Now time.Time
	// Log receives progress messages; nil discards them.
	Log io.Writer
	// PauseGCWhileLoading turns the garbage collector off while data/
	// loads, for a program that builds once and exits (cmd/build): what
	// loading allocates it mostly keeps, so collecting then only marks
	// the same results again and again as the heap grows (about 0.1 s of
	// a small build's 1.7 s of user time). The heap it reaches is below
	// the one rendering reaches with the collector on.
	// A memory limit of 1 GiB plus three times data/'s size stops
	// anything from growing unchecked meanwhile. The setting is the
	// process's: no other work should run beside such a build.
	PauseGCWhileLoading bool
}

// Report says what a build did.
type Report struct {
	Output   string // the output folder
	Base     string // the base path the site is served under
	UpToDate bool   // nothing changed since the last build: nothing done
	Pages    int    // HTML pages
	Files    int    // files in the site
	Written  int    // files written because they changed
	Kept     int    // pages kept from the last build without rendering them
	Removed  int    // stale files removed
}

func (o Options) dataDir() string   { return under(o.Root, o.Config.Data) }
func (o Options) outputDir() string { return under(o.Root, o.Config.Output) }

// configPath is the featbench.toml the options were read from.
func (o Options) configPath() string {
	if o.ConfigPath != "" {
		return o.ConfigPath
	}
	return filepath.Join(o.Root, config.FileName)
}

func (o Options) stateDir() string {
	if o.StateDir != "" {
		return o.StateDir
	}
	return filepath.Join(o.Root, ".cache", "build")
}

// under resolves a configured folder: relative to the project root unless
// it is absolute.
func under(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// Check loads and validates data/ without writing anything.
func Check(ctx context.Context, opts Options) (*bench.Data, error) {
	data, err := bench.Load(ctx, opts.dataDir())
	if err != nil {
		return nil, err
	}
	if err := checkBoards(opts, data); err != nil {
		return nil, err
	}
	return data, nil
}

// checkBoards checks featbench.toml's [site.boards] against data/: each
// key names a dataset (or dataset version) there, and a default split
// is a split of every version it applies to.
func checkBoards(opts Options, data *bench.Data) error {
	cfg := opts.Config
	problem := func(field, format string, args ...any) error {
		return config.ProblemAt(opts.configPath(), opts.ConfigBytes, field, format, args...)
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Boards)) {
		var versions []*bench.Dataset
		for _, ds := range data.Datasets {
			if ds.Name == k || ds.Key() == k {
				versions = append(versions, ds)
			}
		}
		if len(versions) == 0 {
			return problem("site.boards."+k, "names no dataset under data/datasets/ (want a name, or name/version, such as %q)", firstKey(data))
		}
		sp := cfg.Boards[k].DefaultSplit
		if sp == "" {
			continue
		}
		for _, ds := range versions {
			if ds.Split(sp) == nil {
				var names []string
				for _, s := range ds.Splits {
					names = append(names, s.Name)
				}
				return problem("site.boards."+k+".default_split", "is %q but %s has no such split (its splits: %s)", sp, ds.Key(), strings.Join(names, ", "))
			}
		}
	}
	return nil
}

func firstKey(data *bench.Data) string {
	if len(data.Datasets) == 0 {
		return "name/version"
	}
	return data.Datasets[0].Key()
}

// textRenderer is what instance pages need of markup: statements and
// patches as HTML. Safe for concurrent use: pages render on every CPU.
type textRenderer interface {
	Markdown(src string) (string, error)
	DiffAndFiles(src string) (html string, files []string)
}

// builder holds one build's state.
type builder struct {
	key       string // programKey: part of every page's key
	cfg       config.Site
	data      *bench.Data
	m         *model
	mk        textRenderer
	site      *templates.Site
	factCache map[*bench.Dataset]*instanceFacts
	leads     rowLeads // shared first cells of the system and instance pages' rows
	repoMemo  struct { // repoScores by entry
		mu sync.Mutex
		m  map[*entry]*repoScoresOnce
	}
	// trajs are the submissions' trajectories by instance.
	trajs map[*bench.Submission]map[string][]*bench.Trajectory
	// rows are the row slices of the pages that hold rows by the
	// thousand, reused once a page is rendered: 45 MB a small build.
	rows struct {
		outcomes rowPool[templates.Outcome]
		systems  rowPool[templates.InstanceSystem]
	}
}

// rowPool keeps row slices for reuse.
type rowPool[T any] struct{ p sync.Pool }

// get returns an empty slice with room for n rows.
func (rp *rowPool[T]) get(n int) []T {
	if s, ok := rp.p.Get().(*[]T); ok && cap(*s) >= n {
		return (*s)[:0]
	}
	return make([]T, 0, n)
}

// put gives back rows no page refers to any more.
func (rp *rowPool[T]) put(rows []T) {
	clear(rows) // no strings kept alive by the pool
	rows = rows[:0]
	rp.p.Put(&rows)
}

// afterRender is c, then done once c has rendered.
func afterRender(c templ.Component, done func()) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		defer done()
		return c.Render(ctx, w)
	})
}

// Build validates data/ and renders the site into the output folder. When
// the data is invalid nothing is written.
func Build(ctx context.Context, opts Options) (Report, error) {
	rep := Report{Output: opts.outputDir(), Base: opts.Config.BasePath()}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	for _, w := range Warnings(opts) {
		fmt.Fprintln(logw, "warning:", w)
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	lib, err := chartLibrary(ctx, opts, logw)
	if err != nil {
		return rep, err
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "" // no program to identify: programKey keeps nothing
	}
	prog := programKey(opts, lib, exe)
	inputs, dataSize, err := fingerprint(opts, prog)
	if err != nil {
		return rep, err
	}
	out, err := openOutput(opts)
	if err != nil {
		return rep, err
	}
	if err := out.sweep(); err != nil {
		return rep, err
	}
	// Inputs identical to those of the last successful build were valid
	// then and rendered then: nothing to load, nothing to write, as long
	// as every published file is still as that build left it.
	if out.upToDate(inputs) {
		rep.UpToDate = true
		rep.Files = len(out.prev.files)
		return rep, nil
	}
	resume := func() {}
	if opts.PauseGCWhileLoading {
		resume = pauseGC(1<<30 + 3*dataSize)
	}
	data, err := bench.Load(ctx, opts.dataDir())
	resume()
	if err != nil {
		return rep, err
	}
	if err := checkBoards(opts, data); err != nil {
		return rep, err
	}
	// Everything is written into a stage beside the output folder, which
	// replaces it only once complete.
	if err := out.stage(); err != nil {
		return rep, err
	}
	finished := false
	defer func() {
		if !finished {
			out.abandon()
		}
	}()

	base := opts.Config.BasePath()
	m, err := newModel(opts.Config, data, urls{base: base})
	if err != nil {
		return rep, err
	}
	b := &builder{
		key:       prog,
		cfg:       opts.Config,
		data:      data,
		m:         m,
		mk:        markup.New(),
		factCache: map[*bench.Dataset]*instanceFacts{},
		trajs:     trajectoryIndex(data.Submissions),
	}
	b.site = &templates.Site{
		Title:       opts.Config.Title,
		Description: opts.Config.Description,
		Base:        base,
		Generated:   opts.Now.Format("2006-01-02"),
		ChartsJS:    lib.url(base),
		ChartsSRI:   lib.sri(),
		FeedURL:     feedURL(opts.Config),
	}
	// facts are cached per dataset and read by concurrent renders: fill
	// the cache before rendering starts.
	for _, ds := range data.Datasets {
		b.facts(ds)
	}

	pages := b.pages()
	// Trajectory pages are written apart: each archive is read once, as
	// a stream, for all its pages, beside the other pages' rendering.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return b.renderAll(gctx, pages, out) })
	g.Go(func() error { return b.writeTrajectories(gctx, out) })
	if err := g.Wait(); err != nil {
		return rep, err
	}
	pages = append(pages, b.trajectoryPages()...)
	if err := b.writeAssets(out, lib); err != nil {
		return rep, err
	}
	if err := b.writeSitemap(out, pages); err != nil {
		return rep, err
	}
	removed, err := out.finish(ctx, inputs)
	if err != nil {
		return rep, err
	}
	finished = true
	for _, p := range pages {
		if p.html {
			rep.Pages++
		}
	}
	rep.Files = len(out.files)
	rep.Written = out.written
	rep.Kept = out.kept
	rep.Removed = removed
	return rep, nil
}

// renderAll renders pages on every CPU and writes them from two writer
// goroutines, so that rendering overlaps with the system calls of
// creating thousands of files.
func (b *builder) renderAll(ctx context.Context, pages []page, out *output) error {
	type file struct {
		rel   string
		data  []byte
		lines [][]byte      // instead of data
		key   uint64        // what it was rendered from, if keyed
		buf   *bytes.Buffer // returned to free once written
		big   bool          // buf goes back to bigFree
	}
	// Pages are tens of kilobytes each and thousands in all: reusing
	// buffers saves allocating (and the kernel faulting in) their bytes
	// again for every page. A channel rather than a sync.Pool, which
	// empties at every garbage collection; pages of megabytes are few,
	// and their buffers are not kept.
	const queued, keepUnder = 64, 1 << 20
	free := make(chan *bytes.Buffer, queued+8)
	// Pages of megabytes (page.big) take buffers of their own, one a
	// renderer: grown from nothing for each, a 1.2 MB page allocated
	// twice its size (a fifth of a small build's bytes).
	// No more of them than bigFree holds: the system pages come one
	// after the other, and a new buffer for each one waiting in files
	// made a dozen of them.
	bigFree := make(chan *bytes.Buffer, runtime.GOMAXPROCS(0)+2)
	var bigMade atomic.Int32
	g, gctx := errgroup.WithContext(ctx)
	files := make(chan file, queued)
	// Two writers: file creation waits on the file system as much as it
	// computes, and a second writer measured faster; more contend.
	for range 2 {
		g.Go(func() error {
			for f := range files {
				var err error
				if f.lines != nil {
					err = out.writeLines(f.rel, f.lines)
				} else {
					err = out.writeContent(f.rel, content{data: f.data}, f.key)
				}
				if err != nil {
					return err // errgroup cancels gctx: the renders stop
				}
				if f.buf != nil {
					f.buf.Reset()
					pool := free
					if f.big {
						pool = bigFree
					}
					if f.big || f.buf.Cap() < keepUnder {
						select {
						case pool <- f.buf:
						default:
						}
					}
				}
			}
			return nil
		})
	}
	renders, rctx := errgroup.WithContext(gctx)
	render := func(p page) error {
		if err := rctx.Err(); err != nil {
			return err
		}
		if p.lines != nil {
			lines, err := p.lines()
			if err != nil {
				return err
			}
			select {
			case files <- file{rel: b.rel(p.url), lines: lines}:
				return nil
			case <-rctx.Done():
				return rctx.Err()
			}
		}
		if p.source != nil {
			rel, key := b.rel(p.url), sourceKey(p.source.Path)
			if done, err := out.reuse(rel, key, false); done || err != nil {
				return err
			}
			return out.copySource(rel, func() (*os.File, int64, error) {
				f, size, err := bench.OpenFile(p.source.Path, math.MaxInt64)
				if err == nil && size != p.source.Size {
					f.Close()
					err = fmt.Errorf("%s changed since data/ was loaded (%d bytes, then %d): build again", p.source.Path, p.source.Size, size)
				}
				return f, size, err
			}, key)
		}
		render, key := p.render, uint64(0)
		if p.keyed != nil {
			var err error
			if key, render, err = p.keyed(); err != nil {
				return err
			}
			if done, err := out.reuseKeyed(b.rel(p.url), key); done || err != nil {
				return err
			}
		}
		comp, raw, err := render()
		if err != nil {
			return err
		}
		var buf *bytes.Buffer
		if comp != nil {
			switch {
			case p.big && bigMade.Add(1) > int32(cap(bigFree)):
				select { // the writers give one back once written
				case buf = <-bigFree:
				case <-rctx.Done():
					return rctx.Err()
				}
			case p.big:
				select {
				case buf = <-bigFree:
				default:
					buf = new(bytes.Buffer)
					buf.Grow(2 << 20)
				}
			default:
				select {
				case buf = <-free:
				default:
					buf = new(bytes.Buffer)
				}
			}
			if err := comp.Render(rctx, buf); err != nil {
				return fmt.Errorf("rendering %s: %w", p.url, err)
			}
			raw = buf.Bytes()
		}
		select {
		case files <- file{rel: b.rel(p.url), data: raw, key: key, buf: buf, big: p.big}:
			return nil
		case <-rctx.Done():
			return rctx.Err()
		}
	}
	// One renderer a CPU, each taking pages in turn: a goroutine a page
	// grew a new stack to the templates' depth for every page.
	work := make(chan page)
	renders.Go(func() error {
		defer close(work)
		for _, p := range pages {
			select {
			case work <- p:
			case <-rctx.Done():
				return nil
			}
		}
		return nil
	})
	for range runtime.GOMAXPROCS(0) {
		renders.Go(func() error {
			for p := range work {
				if err := render(p); err != nil {
					return err
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(files)
		return renders.Wait()
	})
	return g.Wait()
}

// link resolves a configured link: a site path such as "datasets/" is
// taken relative to the base path; URLs with a scheme stay as they are.
func (b *builder) link(s string) string {
	if s == "" || strings.Contains(s, "://") || strings.HasPrefix(s, "/") {
		return s
	}
	return b.site.Base + s
}

// rel turns a site URL into its file under the output folder.
func (b *builder) rel(url string) string {
	r := strings.TrimPrefix(url, b.site.Base)
	if r == "" || strings.HasSuffix(r, "/") {
		r += "index.html"
	}
	return r
}

// pages lists every file of the site but the static assets. Components are
// built lazily inside render so that the work runs concurrently.
func (b *builder) pages() []page {
	u := b.m.u
	ps := []page{
		{url: u.base, html: true, render: func() (templ.Component, []byte, error) { return b.home(), nil, nil }},
		{url: u.base + "404.html", render: func() (templ.Component, []byte, error) {
			return templates.NotFoundPage(&templates.NotFound{Page: b.frame(u.base+"404.html", nil, "Page not found", "")}), nil, nil
		}},
		{url: u.base + "datasets/", html: true, render: func() (templ.Component, []byte, error) { return b.datasetIndex(), nil, nil }},
		{url: u.base + "robots.txt", render: func() (templ.Component, []byte, error) { return nil, b.robots(), nil }},
	}
	// A feed needs absolute URLs: none when base_url is only a path.
	if b.site.FeedURL != "" {
		ps = append(ps, page{url: b.site.FeedURL, render: func() (templ.Component, []byte, error) { return nil, b.feed(), nil }})
	}
	for _, bd := range b.m.boards {
		ps = append(ps,
			page{url: u.board(bd.ds, bd.split), html: true, render: func() (templ.Component, []byte, error) { return b.boardPage(bd), nil, nil }},
			page{url: u.board(bd.ds, bd.split) + "board.csv", render: func() (templ.Component, []byte, error) {
				raw, err := boardCSV(b.m.view(bd, "board"), b.absolute)
				return nil, raw, err
			}},
			page{url: u.board(bd.ds, bd.split) + "board.json", render: func() (templ.Component, []byte, error) {
				raw, err := boardJSON(b.m.view(bd, "board"), b.absolute)
				return nil, raw, err
			}},
		)
		if bd.ds.PublishesStatements() {
			ps = append(ps, page{url: u.download(bd.ds, bd.split), lines: func() ([][]byte, error) {
				return splitLines(bd.ds, bd.split)
			}})
		}
		for _, e := range bd.entries {
			if e.sub.PerInstance() {
				ps = append(ps, page{url: u.compare(bd.ds, bd.split), html: true, render: func() (templ.Component, []byte, error) {
					comp, err := b.comparePage(bd)
					return comp, nil, err
				}})
				break
			}
		}
	}
	for _, ds := range b.data.Datasets {
		ps = append(ps,
			page{url: u.dataset(ds), html: true, render: func() (templ.Component, []byte, error) { return b.datasetPage(ds), nil, nil }},
			page{url: u.repos(ds), html: true, render: func() (templ.Component, []byte, error) { return b.reposPage(ds), nil, nil }},
			page{url: u.charts(ds), html: true, render: func() (templ.Component, []byte, error) { return b.chartsPage(ds), nil, nil }},
		)
		systems := b.systems(ds)
		slugs := make([]string, 0, len(systems))
		for slug := range systems {
			slugs = append(slugs, slug)
		}
		sort.Strings(slugs)
		for _, slug := range slugs {
			entries := systems[slug]
			ps = append(ps, page{url: u.system(ds, slug), html: true, big: ds.HasInstances(), keyed: func() (uint64, func() (templ.Component, []byte, error), error) {
				return b.systemPage(ds, entries)
			}})
		}
		if !ds.PublishesStatements() {
			continue
		}
		for _, in := range ds.Instances {
			ps = append(ps, page{url: u.instance(ds, in.InstanceID), html: true, keyed: func() (uint64, func() (templ.Component, []byte, error), error) {
				return b.instancePage(ds, in)
			}})
		}
	}
	// Organisation logos as validated, and the files a submission folder
	// holds beside its results (read again as Load reads data/).
	keys := make([]string, 0, len(b.data.Logos))
	for k := range b.data.Logos {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		l := b.data.Logos[k]
		ps = append(ps, page{url: u.logo(k, l.Ext), render: func() (templ.Component, []byte, error) { return nil, l.Data, nil }})
	}
	for _, s := range b.data.Submissions {
		for _, f := range s.Files {
			if !publishedFile(s, f.Name) {
				continue
			}
			ps = append(ps, page{url: u.file(s, f.Name), source: &f})
		}
	}
	return ps
}

// programKey identifies what every page depends on besides data/: the
// program at exe (its templates are compiled in) by its bytes, so that
// the same code built again (go run) counts as the same, featbench.toml,
// the options, the chart library and the date shown. Without a program
// to read, the key is one no other build has: nothing is kept.
func programKey(opts Options, lib *chartLib, exe string) string {
	h := sha256.New()
	if sum, err := fileHash(exe); exe != "" && err == nil {
		fmt.Fprintf(h, "exe %x\n", sum)
	} else {
		fmt.Fprintf(h, "exe unknown %d %d\n", os.Getpid(), time.Now().UnixNano())
	}
	fmt.Fprintf(h, "config %x\n", sha256.Sum256(opts.ConfigBytes))
	fmt.Fprintf(h, "options %+v\n", opts.Config)
	// The library by its bytes, not by where it lies: the same project
	// given by another path (--root . or an absolute one) keeps its pages.
	fmt.Fprintf(h, "charts %s %t %x\n", lib.version, lib.data != nil, xxhash.Sum64(lib.data))
	fmt.Fprintf(h, "date %s\n", opts.Now.Format("2006-01-02"))
	return hex.EncodeToString(h.Sum(nil))
}

// fileHash is the xxHash of a file's bytes, read through a small buffer:
// the executable is 20 MB, which read whole cost a small build as many
// page faults as its hashing.
func fileHash(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	d := xxhash.New()
	if _, err := io.Copy(d, f); err != nil {
		return 0, err
	}
	return d.Sum64(), nil
}

// pauseGC turns the garbage collector off, with a memory limit of limit
// bytes (or the limit already set, when lower), until the returned
// function restores both settings.
func pauseGC(limit int64) (resume func()) {
	prevLimit := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(min(limit, prevLimit))
	prevPercent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}
}

// fingerprint identifies every input of a build: the program's key and
// each file under data/ by its path there, size and modification time.
// It also returns the files' total size.
func fingerprint(opts Options, prog string) (string, int64, error) {
	h := sha256.New()
	fmt.Fprintf(h, "program %s\n", prog)
	root := opts.dataDir()
	var size int64
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		// By the path under data/: the same project given by another
		// path is the same input.
		fmt.Fprintf(h, "data %s %d %d\n", strings.TrimPrefix(path, root), fi.Size(), fi.ModTime().UnixNano())
		size += fi.Size()
		return nil
	})
	if err != nil {
		return "", 0, fmt.Errorf("fingerprinting data: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), size, nil
}
