package site

import (
	"strconv"
	"strings"

	"github.com/featbench/featbench/bench"
)

// bibtex renders a dataset's citation as a BibTeX entry, or "" when its
// manifest gives none. Defaults come from the manifest: the title, the
// release year, the paper URL.
func bibtex(ds *bench.Dataset) string {
	c := ds.Citation
	if c == nil {
		return ""
	}
	kind := c.Kind
	if kind == "" {
		kind = "misc"
	}
	key := c.Key
	if key == "" {
		key = ds.Name + strconv.Itoa(ds.ReleaseDate.Year())
	}
	title := c.Title
	if title == "" {
		title = ds.Title
	}
	year := c.Year
	if year == 0 {
		year = ds.ReleaseDate.Year()
	}
	url := c.URL
	if url == "" {
		url = ds.PaperURL
	}
	var fields [][2]string
	add := func(name, v string) {
		if v != "" {
			fields = append(fields, [2]string{name, v})
		}
	}
	add("title", title)
	add("author", strings.Join(c.Authors, " and "))
	switch kind {
	case "article":
		add("journal", c.Venue)
	case "inproceedings":
		add("booktitle", c.Venue)
	case "techreport":
		add("institution", c.Venue)
	default:
		add("howpublished", c.Venue)
	}
	add("year", strconv.Itoa(year))
	if c.Eprint != "" {
		add("eprint", c.Eprint)
		add("archivePrefix", "arXiv")
	}
	add("doi", c.DOI)
	add("url", url)
	var b strings.Builder
	b.WriteString("@" + kind + "{" + key + ",\n")
	for i, f := range fields {
		b.WriteString("  " + f[0] + " = {" + bibValue(f[1]) + "}")
		if i < len(fields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.String()
}

// bibValue keeps a value from ending its braces early: braces and
// backslashes are escaped, line breaks become spaces.
func bibValue(s string) string {
	r := strings.NewReplacer(`\`, `\textbackslash{}`, "{", `\{`, "}", `\}`, "\n", " ", "\r", " ")
	return r.Replace(s)
}
