package pyindex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/url"
	"strings"
	"time"

	xhtml "golang.org/x/net/html"
)

// maxPage bounds a project page read from an index: the largest on PyPI
// are a few megabytes.
const maxPage = 64 << 20

// Parse reads a project page an index served at pageURL with the given
// Content-Type, in either form, and resolves each file's URL against
// pageURL.
func Parse(r io.Reader, contentType, pageURL string) (*Page, error) {
	base, err := url.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("page %s: %w", pageURL, err)
	}
	body, err := io.ReadAll(io.LimitReader(r, maxPage+1))
	if err != nil {
		return nil, fmt.Errorf("page %s: %w", pageURL, err)
	}
	if len(body) > maxPage {
		return nil, fmt.Errorf("page %s: over %d MiB", pageURL, maxPage>>20)
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	var p *Page
	switch mt {
	case JSONType:
		p, err = parseJSON(body)
	case HTMLType, "text/html", "":
		p, err = parseHTML(body)
	default:
		return nil, fmt.Errorf("page %s: served as %q, which is neither PEP 691's JSON nor HTML", pageURL, contentType)
	}
	if err != nil {
		return nil, fmt.Errorf("page %s: %w", pageURL, err)
	}
	for i := range p.Files {
		u, err := base.Parse(p.Files[i].URL)
		if err != nil {
			return nil, fmt.Errorf("page %s: file %s: bad URL %q", pageURL, p.Files[i].Filename, p.Files[i].URL)
		}
		u.Fragment = ""
		p.Files[i].URL = u.String()
	}
	return p, nil
}

// jsonPage is PEP 691's project page (with PEP 700's fields).
type jsonPage struct {
	Meta struct {
		APIVersion string `json:"api-version"`
	} `json:"meta"`
	Name     string     `json:"name"`
	Files    []jsonFile `json:"files"`
	Versions []string   `json:"versions,omitempty"`
}

type jsonFile struct {
	Filename       string            `json:"filename"`
	URL            string            `json:"url"`
	Hashes         map[string]string `json:"hashes"`
	RequiresPython *string           `json:"requires-python,omitempty"`
	Yanked         json.RawMessage   `json:"yanked,omitempty"` // false, true or the reason
	UploadTime     *string           `json:"upload-time,omitempty"`
	Size           *int64            `json:"size,omitempty"`
}

func parseJSON(body []byte) (*Page, error) {
	var jp jsonPage
	if err := json.Unmarshal(body, &jp); err != nil {
		return nil, fmt.Errorf("not PEP 691 JSON: %w", err)
	}
	if !strings.HasPrefix(jp.Meta.APIVersion, "1.") {
		return nil, fmt.Errorf("API version %q; this reads 1.x", jp.Meta.APIVersion)
	}
	p := &Page{Name: jp.Name}
	for _, jf := range jp.Files {
		f := File{Filename: jf.Filename, URL: jf.URL, Hashes: jf.Hashes, Size: -1}
		if f.Filename == "" || f.URL == "" {
			return nil, errors.New("a file without filename or url")
		}
		if jf.RequiresPython != nil {
			f.RequiresPython = *jf.RequiresPython
		}
		if len(jf.Yanked) > 0 {
			var b bool
			var reason string
			switch {
			case json.Unmarshal(jf.Yanked, &b) == nil:
				f.Yanked = b
			case json.Unmarshal(jf.Yanked, &reason) == nil:
				f.Yanked, f.YankedReason = true, reason
			default:
				return nil, fmt.Errorf("file %s: yanked is %s, neither a boolean nor a reason", f.Filename, jf.Yanked)
			}
		}
		if jf.UploadTime != nil {
			t, err := time.Parse(time.RFC3339Nano, *jf.UploadTime)
			if err != nil {
				return nil, fmt.Errorf("file %s: upload-time %q is not an ISO 8601 time", f.Filename, *jf.UploadTime)
			}
			f.UploadTime = t.UTC()
		}
		if jf.Size != nil {
			f.Size = *jf.Size
		}
		p.Files = append(p.Files, f)
	}
	return p, nil
}

// parseHTML reads PEP 503's page: one anchor per file, its text the file
// name, its href's fragment a hash, data-requires-python and data-yanked
// its attributes.
func parseHTML(body []byte) (*Page, error) {
	doc, err := xhtml.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("not HTML: %w", err)
	}
	p := &Page{}
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode && n.Data == "a" {
			f := File{Size: -1}
			hasHref := false
			for _, a := range n.Attr {
				switch a.Key {
				case "href":
					hasHref = true
					f.URL = a.Val
					if u, err := url.Parse(a.Val); err == nil && u.Fragment != "" {
						if alg, hex, ok := strings.Cut(u.Fragment, "="); ok {
							f.Hashes = map[string]string{alg: hex}
						}
					}
				case "data-requires-python":
					f.RequiresPython = a.Val
				case "data-yanked":
					f.Yanked, f.YankedReason = true, a.Val
				}
			}
			f.Filename = strings.TrimSpace(text(n))
			if hasHref && f.Filename != "" {
				p.Files = append(p.Files, f)
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return p, nil
}

func text(n *xhtml.Node) string {
	if n.Type == xhtml.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(text(c))
	}
	return b.String()
}

// Write writes p in the JSON form (asJSON) or the HTML one, and returns
// the Content-Type to serve it with. Files keep their URLs as given.
func Write(w io.Writer, p *Page, asJSON bool) (string, error) {
	if asJSON {
		jp := jsonPage{Name: p.Name, Files: []jsonFile{}}
		jp.Meta.APIVersion = apiVersion
		seen := map[string]bool{}
		for _, f := range p.Files {
			jf := jsonFile{Filename: f.Filename, URL: f.URL, Hashes: f.Hashes}
			if jf.Hashes == nil {
				jf.Hashes = map[string]string{}
			}
			if f.RequiresPython != "" {
				rp := f.RequiresPython
				jf.RequiresPython = &rp
			}
			switch {
			case f.Yanked && f.YankedReason != "":
				jf.Yanked, _ = json.Marshal(f.YankedReason)
			case f.Yanked:
				jf.Yanked = json.RawMessage("true")
			default:
				jf.Yanked = json.RawMessage("false")
			}
			if !f.UploadTime.IsZero() {
				t := f.UploadTime.UTC().Format("2006-01-02T15:04:05.000000Z")
				jf.UploadTime = &t
			}
			if f.Size >= 0 {
				s := f.Size
				jf.Size = &s
			}
			jp.Files = append(jp.Files, jf)
			if _, v, ok := ParseFilename(f.Filename); ok && !seen[v] {
				seen[v] = true
				jp.Versions = append(jp.Versions, v)
			}
		}
		if jp.Versions == nil {
			jp.Versions = []string{}
		}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return JSONType, enc.Encode(jp)
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.1\"><title>Links for ")
	b.WriteString(html.EscapeString(p.Name))
	b.WriteString("</title></head><body><h1>Links for ")
	b.WriteString(html.EscapeString(p.Name))
	b.WriteString("</h1>\n")
	for _, f := range p.Files {
		href := f.URL
		if h, ok := f.Hashes["sha256"]; ok {
			href += "#sha256=" + h
		}
		fmt.Fprintf(&b, `<a href="%s"`, html.EscapeString(href))
		if f.RequiresPython != "" {
			fmt.Fprintf(&b, ` data-requires-python="%s"`, html.EscapeString(f.RequiresPython))
		}
		if f.Yanked {
			fmt.Fprintf(&b, ` data-yanked="%s"`, html.EscapeString(f.YankedReason))
		}
		fmt.Fprintf(&b, ">%s</a><br>\n", html.EscapeString(f.Filename))
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return "text/html; charset=utf-8", err
}
