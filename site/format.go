package site

import (
	"fmt"
	"math"
	"strconv"

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

// figureCell shows a published figure exactly as printed.
func figureCell(f bench.Figure) templates.Cell {
	if !f.Set() {
		return missing()
	}
	return templates.Cell{Text: f.Text, Sort: f.Value}
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
