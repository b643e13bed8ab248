package site

import (
	"bytes"
	"embed"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/templates"
)

//go:embed assets/style.css assets/site.js assets/theme.js assets/favicon.svg
var assets embed.FS

// writeAssets writes our own CSS and JS, the highlighting styles and the
// local copy of the chart library.
func (b *builder) writeAssets(out *output, lib *chartLib) error {
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		return err
	}
	hl, err := highlightCSS()
	if err != nil {
		return err
	}
	if err := out.write("assets/style.css", append(append(css, '\n'), hl...)); err != nil {
		return err
	}
	js, err := assets.ReadFile("assets/site.js")
	if err != nil {
		return err
	}
	if err := out.write("assets/site.js", js); err != nil {
		return err
	}
	for _, name := range []string{"theme.js", "favicon.svg"} {
		raw, err := assets.ReadFile("assets/" + name)
		if err != nil {
			return err
		}
		if err := out.write("assets/"+name, raw); err != nil {
			return err
		}
	}
	if lib.data != nil {
		if err := out.write("assets/echarts.min.js", lib.data); err != nil {
			return err
		}
	}
	return nil
}

// boardCSV is a leaderboard as CSV: one row per system, figures as shown.
func boardCSV(v *templates.Board) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"rank", "system", "scaffold", "model", "organisations", "resolved_pct", "resolved_ci95",
		"passed_pct", "l1_resolved_pct", "l1_passed_pct", "l2_resolved_pct", "l2_passed_pct", "tokens_in", "tokens_out", "cost_per_instance", "date",
		"open_scaffold", "open_weights", "checked", "attempts", "tags", "reported", "source"})
	cell := func(c templates.Cell) string {
		if c.Missing {
			return ""
		}
		return c.Text
	}
	for _, r := range v.Rows {
		_ = w.Write([]string{strconv.Itoa(r.Rank), r.Name, r.Scaffold, r.Model, r.Organisations,
			cell(r.Resolved), r.Resolved.Note, cell(r.Passed), cell(r.L1Resolved), cell(r.L1Passed), cell(r.L2Resolved), cell(r.L2Passed),
			cell(r.TokensIn), cell(r.TokensOut), cell(r.Cost), r.Date,
			strconv.FormatBool(r.OpenScaffold), strconv.FormatBool(r.OpenWeights), strconv.FormatBool(r.Checked),
			strconv.Itoa(r.Attempts), strings.Join(r.Tags, ";"), strconv.FormatBool(r.Reported), r.Source})
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// boardRow is a leaderboard row in the JSON download.
type boardRow struct {
	Rank          int      `json:"rank"`
	System        string   `json:"system"`
	Scaffold      string   `json:"scaffold"`
	Model         string   `json:"model"`
	Organisations string   `json:"organisations,omitempty"`
	Resolved      *string  `json:"resolved_pct"`
	ResolvedCI    string   `json:"resolved_ci95,omitempty"`
	Passed        *string  `json:"passed_pct"`
	L1Resolved    *string  `json:"l1_resolved_pct,omitempty"`
	L1Passed      *string  `json:"l1_passed_pct,omitempty"`
	L2Resolved    *string  `json:"l2_resolved_pct,omitempty"`
	L2Passed      *string  `json:"l2_passed_pct,omitempty"`
	TokensIn      *string  `json:"tokens_in,omitempty"`
	TokensOut     *string  `json:"tokens_out,omitempty"`
	Cost          *string  `json:"cost_per_instance,omitempty"`
	Date          string   `json:"date"`
	OpenScaffold  bool     `json:"open_scaffold"`
	OpenWeights   bool     `json:"open_weights"`
	Checked       bool     `json:"checked"`
	Attempts      int      `json:"attempts"`
	Tags          []string `json:"tags,omitempty"`
	Reported      bool     `json:"reported"`
	Source        string   `json:"source,omitempty"`
}

func boardJSON(v *templates.Board) ([]byte, error) {
	str := func(c templates.Cell) *string {
		if c.Missing {
			return nil
		}
		s := c.Text
		return &s
	}
	doc := struct {
		Dataset   string     `json:"dataset"`
		Split     string     `json:"split"`
		Instances int        `json:"instances"`
		Rows      []boardRow `json:"rows"`
	}{Dataset: v.Dataset, Split: v.Split, Instances: v.Size, Rows: []boardRow{}}
	for _, r := range v.Rows {
		doc.Rows = append(doc.Rows, boardRow{
			Rank: r.Rank, System: r.Name, Scaffold: r.Scaffold, Model: r.Model, Organisations: r.Organisations,
			Resolved: str(r.Resolved), ResolvedCI: r.Resolved.Note, Passed: str(r.Passed),
			L1Resolved: str(r.L1Resolved), L1Passed: str(r.L1Passed),
			L2Resolved: str(r.L2Resolved), L2Passed: str(r.L2Passed),
			TokensIn: str(r.TokensIn), TokensOut: str(r.TokensOut), Cost: str(r.Cost), Date: r.Date,
			OpenScaffold: r.OpenScaffold, OpenWeights: r.OpenWeights, Checked: r.Checked, Attempts: r.Attempts,
			Tags: r.Tags, Reported: r.Reported, Source: r.Source,
		})
	}
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding board: %w", err)
	}
	return append(raw, '\n'), nil
}

// splitJSONL is a split's instances, one JSON object per line, with every
// field the dataset holds.
func splitJSONL(ds *bench.Dataset, split string) ([]byte, error) {
	lines, size, err := splitLines(ds, split)
	if err != nil {
		return nil, err
	}
	// Sized once: the full split is tens of megabytes.
	out := make([]byte, 0, size)
	for _, raw := range lines {
		out = append(out, raw...)
		out = append(out, '\n')
	}
	return out, nil
}

// splitLines returns a split's published lines and their size in bytes
// with a newline after each.
func splitLines(ds *bench.Dataset, split string) ([][]byte, int, error) {
	ins := ds.SplitInstances(split)
	lines := make([][]byte, len(ins))
	size := 0
	for i, in := range ins {
		raw, err := in.JSON()
		if err != nil {
			return nil, 0, fmt.Errorf("encoding %s: %w", in.InstanceID, err)
		}
		lines[i] = raw
		size += len(raw) + 1
	}
	return lines, size, nil
}

// wholeInstancesFile returns the dataset's instances.jsonl when a split's
// download would be that file byte for byte: the split has every instance
// in file order, and the file is their published lines and nothing else.
// The full split is the whole file, tens of megabytes, and publishing it
// as is (a hard link) saves building and writing it again. Anything else
// (a subset, blank lines, CRLF) returns nil and the split is written out.
func wholeInstancesFile(ds *bench.Dataset, split string) *source {
	ins := ds.SplitInstances(split)
	if len(ins) == 0 || len(ins) != len(ds.Instances) {
		return nil
	}
	for i, in := range ins {
		if in != ds.Instances[i] {
			return nil
		}
	}
	lines, size, err := splitLines(ds, split)
	if err != nil {
		return nil
	}
	path := filepath.Join(ds.Dir, bench.InstancesFile)
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(size) {
		return nil
	}
	// Equal sizes still allow a trimmed "\r" where a "\n" is missing:
	// compare the content itself, streamed from the page cache.
	want, got := xxhash.New(), xxhash.New()
	for _, raw := range lines {
		_, _ = want.Write(raw)
		_, _ = want.Write([]byte{'\n'})
	}
	if _, err := io.Copy(got, f); err != nil || got.Sum64() != want.Sum64() {
		return nil
	}
	return &source{path: path, hash: hashString(want.Sum64())}
}

// absolute makes a site URL absolute with base_url's scheme and host, for
// the feed and the sitemap; it stays a path when base_url is only a path.
func (b *builder) absolute(url string) string {
	if !b.cfg.Absolute() {
		return url
	}
	return strings.TrimSuffix(b.cfg.BaseURL, "/") + strings.TrimPrefix(url, strings.TrimSuffix(b.cfg.BasePath(), "/"))
}

type atomLink struct {
	Href string `xml:"href,attr"`
	Rel  string `xml:"rel,attr,omitempty"`
}

type atomEntry struct {
	Title   string   `xml:"title"`
	ID      string   `xml:"id"`
	Updated string   `xml:"updated"`
	Link    atomLink `xml:"link"`
	Summary string   `xml:"summary"`
}

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string      `xml:"title"`
	ID      string      `xml:"id"`
	Updated string      `xml:"updated"`
	Links   []atomLink  `xml:"link"`
	Author  string      `xml:"author>name"`
	Entries []atomEntry `xml:"entry"`
}

// feed is the Atom feed of leaderboard changes.
func (b *builder) feed() []byte {
	changes := b.changes()
	f := atomFeed{
		Title:  b.cfg.Title + " leaderboard changes",
		ID:     b.absolute(b.site.Base),
		Author: b.cfg.Title,
		Links: []atomLink{
			{Href: b.absolute(b.site.Base + "feed.xml"), Rel: "self"},
			{Href: b.absolute(b.site.Base)},
		},
		Updated: "1970-01-01T00:00:00Z",
	}
	for i, c := range changes {
		day, _ := time.Parse("2006-01-02", c.Date)
		up := day.UTC().Format(time.RFC3339)
		if i == 0 {
			f.Updated = up
		}
		f.Entries = append(f.Entries, atomEntry{
			Title:   c.Title,
			ID:      b.absolute(c.URL) + "#" + c.Date,
			Updated: up,
			Link:    atomLink{Href: b.absolute(c.URL)},
			Summary: c.Summary,
		})
	}
	raw, _ := xml.MarshalIndent(f, "", "  ")
	return append([]byte(xml.Header), append(raw, '\n')...)
}

func (b *builder) robots() []byte {
	return []byte("User-agent: *\nAllow: /\nSitemap: " + b.absolute(b.site.Base+"sitemap.xml") + "\n")
}

type sitemapURL struct {
	Loc string `xml:"loc"`
}

type sitemap struct {
	XMLName xml.Name     `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	URLs    []sitemapURL `xml:"url"`
}

func (b *builder) writeSitemap(out *output, pages []page) error {
	var sm sitemap
	for _, p := range pages {
		if p.html {
			sm.URLs = append(sm.URLs, sitemapURL{Loc: b.absolute(p.url)})
		}
	}
	raw, err := xml.MarshalIndent(sm, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding sitemap: %w", err)
	}
	return out.write("sitemap.xml", append([]byte(xml.Header), append(raw, '\n')...))
}
