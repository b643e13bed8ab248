package site

import (
	"embed"
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/markup"
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
	hl, err := markup.CSS()
	if err != nil {
		return fmt.Errorf("highlight stylesheet: %w", err)
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

// splitLines returns a split's instances as published, one JSON object
// per line (each to be followed by a newline), with every field the
// dataset holds.
func splitLines(ds *bench.Dataset, split string) ([][]byte, error) {
	ins := ds.SplitInstances(split)
	lines := make([][]byte, len(ins))
	for i, in := range ins {
		raw, err := in.JSON()
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", in.InstanceID, err)
		}
		lines[i] = raw
	}
	return lines, nil
}

// feedURL is the site path of the Atom feed, or "" when base_url is only
// a path: a feed's links must be absolute, and a feed of paths is invalid.
func feedURL(cfg config.Site) string {
	if !cfg.Absolute() {
		return ""
	}
	return cfg.BasePath() + "feed.xml"
}

// baseURLWarning says what a path-only base_url costs, or "" when
// base_url has a host.
func baseURLWarning(cfg config.Site) string {
	if cfg.Absolute() {
		return ""
	}
	return fmt.Sprintf("site.base_url %q is a path, so the site has no sitemap.xml, feed.xml or robots.txt Sitemap line "+
		"(they need absolute URLs): set site.base_url in featbench.toml to the site's full URL, "+
		"for GitHub Pages https://<owner>.github.io/<repo>/", cfg.BaseURL)
}

// absolute makes a site URL absolute with base_url's scheme and host, for
// the feed and the sitemap; it stays a path when base_url is only a path
// (and then neither is published).
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

// robots allows everything and names the sitemap when there is one.
func (b *builder) robots() []byte {
	r := "User-agent: *\nAllow: /\n"
	if b.cfg.Absolute() {
		r += "Sitemap: " + b.absolute(b.site.Base+"sitemap.xml") + "\n"
	}
	return []byte(r)
}

type sitemapURL struct {
	Loc string `xml:"loc"`
}

type sitemap struct {
	XMLName xml.Name     `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	URLs    []sitemapURL `xml:"url"`
}

// writeSitemap lists every HTML page by its absolute URL; without a host
// in base_url there is no sitemap, since one of paths is invalid.
func (b *builder) writeSitemap(out *output, pages []page) error {
	if !b.cfg.Absolute() {
		return nil
	}
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
