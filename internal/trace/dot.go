package trace

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
)

// Styles of nodes in a DOT export, from a walk.
const (
	StyleTop       = "top"       // a tested top-level object, extracted
	StyleExtracted = "extracted" // removed with the feature
	StyleKept      = "kept"      // seen in pass-to-pass runs
	StyleTest      = "test"      // test code
)

var dotStyles = map[string]string{
	StyleTop:       `style=filled fillcolor="#d62728" fontcolor=white`,
	StyleExtracted: `style=filled fillcolor="#ff9896"`,
	StyleKept:      `style=filled fillcolor="#98df8a"`,
	StyleTest:      `shape=note`,
}

// WriteDOT writes the graph in Graphviz's DOT language, one cluster per
// file. style names each node's role (a Style constant, or "" for none).
func WriteDOT(w io.Writer, g *Graph, style func(n *Node) string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "digraph trace {")
	fmt.Fprintln(bw, "\trankdir=LR;")
	fmt.Fprintln(bw, "\tnode [shape=box fontname=\"monospace\" fontsize=10];")
	byFile := map[string][]*Node{}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		byFile[n.File] = append(byFile[n.File], n)
	}
	for i, file := range slices.Sorted(maps.Keys(byFile)) {
		fmt.Fprintf(bw, "\tsubgraph cluster_%d {\n\t\tlabel=%s;\n", i, strconv.Quote(file))
		for _, n := range byFile[file] {
			label := n.Qualname
			if n.Kind != KindModule {
				label += fmt.Sprintf("\\n%d lines, %s", n.Lines(), g.CallsLabel(n))
			}
			attrs := ""
			if style != nil {
				if s := dotStyles[style(n)]; s != "" {
					attrs = " " + s
				}
			}
			// strconv.Quote escapes what DOT's quoted strings need; the
			// label's \n is DOT's own line break.
			fmt.Fprintf(bw, "\t\t%s [label=\"%s\"%s];\n", strconv.Quote(n.ID), dotEscape(label), attrs)
		}
		fmt.Fprintln(bw, "\t}")
	}
	for _, n := range g.Nodes {
		for _, c := range n.Callees {
			fmt.Fprintf(bw, "\t%s -> %s;\n", strconv.Quote(n.ID), strconv.Quote(c))
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

// dotEscape escapes quotes and backslashes other than the \n line breaks
// the label uses.
func dotEscape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && s[i+1] == 'n':
			out = append(out, '\\', 'n')
			i++
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\n':
			out = append(out, '\\', 'n')
		default:
			out = append(out, c)
		}
	}
	return string(out)
}
