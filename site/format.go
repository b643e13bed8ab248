package site

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/templates"
)

// The site's number formats. Computed rates follow the published tables:
// % resolved to one decimal, % passed to two.

func missing() templates.Cell { return templates.Cell{Text: "—", Missing: true} }

func pctCell(rate float64, decimals int) templates.Cell {
	v := rate * 100
	return templates.Cell{Text: strconv.FormatFloat(v, 'f', decimals, 64), Sort: v}
}

// intCell shows an optional count; "—" when the data does not have it.
func intCell(v *int) templates.Cell {
	if v == nil {
		return missing()
	}
	return templates.Cell{Text: strconv.Itoa(*v), Sort: float64(*v)}
}

// figureCell shows a published figure as printed (alignDecimals may pad
// it to its column's decimals).
func figureCell(f bench.Figure) templates.Cell {
	if !f.Set() {
		return missing()
	}
	return templates.Cell{Text: f.Text, Sort: f.Value, Published: f.Text}
}

// alignDecimals gives a column's plain-number cells the most decimals
// any of them has, so that one column does not mix "20" and "20.0", nor
// published figures and computed ones. A published figure padded so
// keeps its text as printed (Published) for the cell's title; a computed
// one is written again from its value. Cells with a unit (2.6M, $0.12) are
// left as they are.
func alignDecimals(cells ...*templates.Cell) {
	most := -1
	for _, c := range cells {
		if d, ok := decimals(c); ok && d > most {
			most = d
		}
	}
	for _, c := range cells {
		if d, ok := decimals(c); ok && d < most {
			c.Text = strconv.FormatFloat(c.Sort, 'f', most, 64)
		}
	}
}

// decimals is how many digits a plain-number cell shows after its point.
func decimals(c *templates.Cell) (int, bool) {
	if c.Missing || !plainNumber(c.Text) {
		return 0, false
	}
	if i := strings.IndexByte(c.Text, '.'); i >= 0 {
		return len(c.Text) - i - 1, true
	}
	return 0, true
}

// costAs is a published cost in the format of computed ones ($0.12).
func costAs(f bench.Figure) templates.Cell {
	if !f.Set() || !plainNumber(strings.TrimPrefix(f.Text, "$")) {
		return figureCell(f)
	}
	c := costCell(f.Value, true)
	c.Published = f.Text
	return c
}

// plainNumber reports whether s is digits with at most one decimal point.
func plainNumber(s string) bool {
	digits, points := 0, 0
	for i := range len(s) {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}

// tokenCell formats a mean token count the way the paper prints it.
func tokenCell(v float64, ok bool) templates.Cell {
	if !ok {
		return missing()
	}
	return templates.Cell{Text: humanTokens(v), Sort: v}
}

func humanTokens(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(math.Round(v/1e3), 'f', 0, 64) + "k"
	default:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
}

func costCell(v float64, ok bool) templates.Cell {
	if !ok {
		return missing()
	}
	return templates.Cell{Text: fmt.Sprintf("$%.2f", v), Sort: v}
}

func intervalNote(lo, hi float64) string {
	return fmt.Sprintf("95%% CI %.1f–%.1f", lo*100, hi*100)
}

func date(t interface{ Format(string) string }) string { return t.Format("2006-01-02") }
