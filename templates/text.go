package templates

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/a-h/templ"
)

// text is a string shown as text, escaped as { s } escapes it. templ's
// { s } passes every string through fmt.Sprint (an allocation and a copy
// each): in the rows that pages hold by the thousand (a system's result
// on every instance, every system on an instance) it was a tenth of a
// build's CPU.
type text string

// Render writes the text, escaped.
func (t text) Render(_ context.Context, w io.Writer) error {
	_, err := io.WriteString(w, templ.EscapeString(string(t)))
	return err
}

// idText is an instance id shown as text with a line-break opportunity
// after each run of dots and underscores (as site.js's breakable), so a
// narrow column breaks "featbench__textkit.test_case.3f4c65e3.lv1" at
// its parts rather than mid-word.
type idText string

// Render writes the id, escaped, with <wbr> between its parts.
func (t idText) Render(_ context.Context, w io.Writer) error {
	s := string(t)
	from := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '.' && s[i] != '_' {
			continue
		}
		for i+1 < len(s) && (s[i+1] == '.' || s[i+1] == '_') {
			i++
		}
		if i+1 == len(s) {
			break
		}
		if _, err := io.WriteString(w, templ.EscapeString(s[from:i+1])+"<wbr>"); err != nil {
			return err
		}
		from = i + 1
	}
	_, err := io.WriteString(w, templ.EscapeString(s[from:]))
	return err
}

// Render writes the markup as it is.
func (h HTML) Render(_ context.Context, w io.Writer) error {
	_, err := io.WriteString(w, string(h))
	return err
}

// renderHTML is a component's markup (components writing to a
// strings.Builder do not fail).
func renderHTML(c templ.Component) HTML {
	var b strings.Builder
	_ = c.Render(context.Background(), &b)
	return HTML(b.String())
}

// ratio writes "a/b" or "a of b" without making a string of it: rows by
// the hundred thousand in a build.
type ratioText struct {
	a, b int
	sep  string
}

func ratio(a int, sep string, b int) ratioText { return ratioText{a, b, sep} }

// Render writes the two numbers with the separator, escaped.
func (r ratioText) Render(_ context.Context, w io.Writer) error {
	for _, s := range [3]string{intText(r.a), templ.EscapeString(r.sep), intText(r.b)} {
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
	}
	return nil
}

// smallInts are the texts of 0 to 4095: counts of tests written without
// making a string each (a buffer on the stack escapes through the
// writer's interface).
var smallInts = func() (t [4096]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

func intText(n int) string {
	if n >= 0 && n < len(smallInts) {
		return smallInts[n]
	}
	return strconv.Itoa(n)
}
