package templates

import (
	"context"
	"io"

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
