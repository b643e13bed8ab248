package bench_test

import (
	"math"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/featbench/featbench/bench"
)

func TestParseFigure(t *testing.T) {
	for _, c := range []struct {
		in    string
		text  string
		value float64
		err   bool
	}{
		{"12.5", "12.5", 12.5, false},
		{"26.30", "26.30", 26.3, false},
		{"2.6M", "2.6M", 2.6e6, false},
		{"16k", "16k", 16e3, false},
		{"59k", "59k", 59e3, false},
		{"16K", "16K", 16e3, false},
		{"1.2B", "1.2B", 1.2e9, false},
		{"11", "11", 11, false},
		{"0", "0", 0, false},
		{"43.49%", "43.49%", 43.49, false},
		{"  7.0 ", "7.0", 7, false}, // trimmed
		{"abc", "", 0, true},
		{"", "", 0, true},
		{"   ", "", 0, true},
		{"NaN", "", 0, true},
		{"Inf", "", 0, true},
		{"-Inf", "", 0, true},
		{"1e400", "", 0, true},
		{"k", "", 0, true},
		{"%", "", 0, true},
		{"12.5.1", "", 0, true},
		{"2.6 M", "", 0, true},
		{"16kk", "", 0, true},
		// Overflow through the suffix, which ParseFloat does not see.
		{"1e308M", "", 0, true},
		{"1.7e308k", "", 0, true},
		{"-1e308B", "", 0, true},
		{"1e302M", "1e302M", 1e308, false},
		{"0." + strings.Repeat("0", 29) + "1", "0." + strings.Repeat("0", 29) + "1", 1e-30, false},
		{"0." + strings.Repeat("0", 30) + "1", "", 0, true}, // longer than a figure is written
	} {
		f, err := bench.ParseFigure(c.in)
		if c.err {
			if err == nil {
				t.Errorf("ParseFigure(%q) = %+v, want an error", c.in, f)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseFigure(%q): %v", c.in, err)
			continue
		}
		if f.Text != c.text || !approx(f.Value, c.value) {
			t.Errorf("ParseFigure(%q) = {%q %v}, want {%q %v}", c.in, f.Text, f.Value, c.text, c.value)
		}
		if !f.Set() {
			t.Errorf("ParseFigure(%q).Set() = false", c.in)
		}
		if b, _ := f.MarshalText(); string(b) != c.text {
			t.Errorf("MarshalText = %q, want %q", b, c.text)
		}
	}
}

func TestFigureUnmarshalTOML(t *testing.T) {
	type doc struct {
		F bench.Figure `toml:"f"`
	}
	for _, c := range []struct {
		src    string
		text   string
		value  float64
		errSub string
	}{
		{`f = 11`, "11", 11, ""},
		{`f = -3`, "-3", -3, ""},
		{`f = 26.3`, "26.3", 26.3, ""},
		{`f = 26.30`, "26.3", 26.3, ""}, // a TOML float keeps no trailing zero: write "26.30"
		{`f = 1e3`, "1000", 1000, ""},
		{`f = "26.30"`, "26.30", 26.3, ""},
		{`f = "2.6M"`, "2.6M", 2.6e6, ""},
		{`f = "16k"`, "16k", 16e3, ""},
		{`f = "abc"`, "", 0, "not a number"},
		{`f = ""`, "", 0, "empty figure"},
		{`f = true`, "", 0, "want a number or a string"},
		{`f = 2026-01-01`, "", 0, "want a number or a string"},
		{`f = [1]`, "", 0, "want a number or a string"},
		{`f = inf`, "", 0, "want a finite number"},
		{`f = -inf`, "", 0, "want a finite number"},
		{`f = nan`, "", 0, "want a finite number"},
		{`f = "1e308M"`, "", 0, "not a number"},
		{`f = 1e-40`, "", 0, "write the figure as a string"},
	} {
		var d doc
		_, err := toml.Decode(c.src, &d)
		if c.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), c.errSub) {
				t.Errorf("%s: err = %v, want one containing %q", c.src, err, c.errSub)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if d.F.Text != c.text || !approx(d.F.Value, c.value) {
			t.Errorf("%s: {%q %v}, want {%q %v}", c.src, d.F.Text, d.F.Value, c.text, c.value)
		}
	}

	// Direct calls with the types the TOML library passes.
	for _, c := range []struct {
		v     any
		text  string
		value float64
		err   bool
	}{
		{int64(42), "42", 42, false},
		{float64(0.5), "0.5", 0.5, false},
		{"2.6M", "2.6M", 2.6e6, false},
		{"x", "", 0, true},
		{int(42), "", 0, true}, // the library gives int64, never int
		{nil, "", 0, true},
		{math.Inf(1), "", 0, true},
		{math.Inf(-1), "", 0, true},
		{math.NaN(), "", 0, true},
	} {
		var f bench.Figure
		err := f.UnmarshalTOML(c.v)
		if (err != nil) != c.err || f.Text != c.text || !approx(f.Value, c.value) {
			t.Errorf("UnmarshalTOML(%#v) = {%q %v}, %v", c.v, f.Text, f.Value, err)
		}
	}
}

func TestFigureSet(t *testing.T) {
	var nilFig *bench.Figure
	for _, c := range []struct {
		f    *bench.Figure
		want bool
	}{
		{nilFig, false},
		{&bench.Figure{}, false},
		{&bench.Figure{Value: 3}, false}, // a value without text was never given
		{&bench.Figure{Text: "0", Value: 0}, true},
	} {
		if got := c.f.Set(); got != c.want {
			t.Errorf("%+v.Set() = %v, want %v", c.f, got, c.want)
		}
	}
}
