package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Figure is a number as it was published: the text is kept so that the
// site shows "26.30" or "2.6M" exactly as printed, while Value is used for
// sorting and charts. In TOML it is written as a string ("26.30", "2.6M",
// "16k") or as a plain number.
type Figure struct {
	Text  string
	Value float64
}

// ParseFigure reads a published figure: a decimal number with an optional
// k/K (thousand) or M (million) suffix, and an optional trailing %.
func ParseFigure(s string) (Figure, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Figure{}, fmt.Errorf("empty figure")
	}
	// A figure is shown as written: a long one is not a figure.
	if len(t) > maxFigureText {
		return Figure{}, fmt.Errorf("is %d characters long; a figure such as 12.5, 2.6M or 16k is at most %d", len(t), maxFigureText)
	}
	num := strings.TrimSuffix(t, "%")
	mult := 1.0
	switch {
	case strings.HasSuffix(num, "k"), strings.HasSuffix(num, "K"):
		mult, num = 1e3, num[:len(num)-1]
	case strings.HasSuffix(num, "M"):
		mult, num = 1e6, num[:len(num)-1]
	case strings.HasSuffix(num, "B"):
		mult, num = 1e9, num[:len(num)-1]
	}
	v, err := strconv.ParseFloat(num, 64)
	// The suffix can overflow what ParseFloat did not: "1e308M".
	if v *= mult; err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Figure{}, fmt.Errorf("%q is not a number like 12.5, 2.6M or 16k", t)
	}
	return Figure{Text: t, Value: v}, nil
}

// UnmarshalTOML implements toml.Unmarshaler.
func (f *Figure) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		p, err := ParseFigure(x)
		if err != nil {
			return err
		}
		*f = p
	case int64:
		*f = Figure{Text: strconv.FormatInt(x, 10), Value: float64(x)}
	case float64:
		// TOML has inf and nan; a figure is finite.
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("is %v; want a finite number", x)
		}
		t := strconv.FormatFloat(x, 'f', -1, 64)
		if len(t) > maxFigureText {
			return fmt.Errorf("is %v, %d digits written out; write the figure as a string, as published", x, len(t))
		}
		*f = Figure{Text: t, Value: x}
	default:
		return fmt.Errorf("want a number or a string such as \"12.5\", got %T", v)
	}
	return nil
}

// MarshalText writes the figure as published.
func (f Figure) MarshalText() ([]byte, error) { return []byte(f.Text), nil }

// Set reports whether the figure was given at all.
func (f *Figure) Set() bool { return f != nil && f.Text != "" }
