package components_test

import (
	"testing"

	"github.com/featbench/featbench/internal/components"
)

// FuzzParseResult: whatever the script's output, ParseResult either
// refuses it or gives a result every later step handles: shares, the
// dataset's components and their problems.
func FuzzParseResult(f *testing.F) {
	f.Add([]byte(`{"changes":[{"id":"a","files":[{"path":"a.py","added":3,"removed":1,"component_lines":2,"components":[{"name":"f","kind":"function","signature":"def f():","docstring":"D\u0007.","line":1,"spans":[[1,2]],"lines":2}]}]}]}`))
	f.Add([]byte(`{"changes":[{"id":"a","files":[{"path":"a.py","added":-3,"removed":0,"component_lines":9,"components":[],"error":"x"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := components.ParseResult(data)
		if err != nil {
			return
		}
		for i := range res.Changes {
			c := &res.Changes[i]
			c.Share(0)
			c.Errors()
			for _, bc := range c.Bench() {
				_ = bc.Problem()
			}
		}
	})
}
