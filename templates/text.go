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
