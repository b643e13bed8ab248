package markup

import (
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
)

// cssRule is one declaration block of a stylesheet, with its selectors.
type cssRule struct {
	selectors []string
	decls     map[string]string
}

var cssRuleRE = regexp.MustCompile(`([^{}]+)\{([^{}]*)\}`)

// parseCSS reads the rules of css in order, each with the @media
// condition it sits in ("" for none).
func parseCSS(t *testing.T, css string) (rules []cssRule, media []string) {
	t.Helper()
	css = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(css, "")
	condition := ""
	for len(strings.TrimSpace(css)) > 0 {
		css = strings.TrimSpace(css)
		if strings.HasPrefix(css, "@media") {
			open := strings.IndexByte(css, '{')
			condition = strings.TrimSpace(css[len("@media"):open])
			css = css[open+1:]
			continue
		}
		if strings.HasPrefix(css, "}") {
			condition = ""
			css = css[1:]
			continue
		}
		loc := cssRuleRE.FindStringSubmatchIndex(css)
		if loc == nil || loc[0] != 0 {
			t.Fatalf("cannot parse CSS at %.80q", css)
		}
		r := cssRule{decls: map[string]string{}}
		for _, s := range strings.Split(css[loc[2]:loc[3]], ",") {
			r.selectors = append(r.selectors, strings.TrimSpace(s))
		}
		for _, d := range strings.Split(css[loc[4]:loc[5]], ";") {
			if k, v, ok := strings.Cut(d, ":"); ok {
				r.decls[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		rules = append(rules, r)
		media = append(media, condition)
		css = css[loc[1]:]
	}
	return rules, media
}

// themeStyles resolves, for one theme, each selector's declarations as
// the cascade gives them among the stylesheet's rules (later rules win;
// selectors here are all of one specificity within a theme).
func themeStyles(rules []cssRule, media []string, scope, condition string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for i, r := range rules {
		if media[i] != condition {
			continue
		}
		for _, s := range r.selectors {
			if scope != "" {
				var ok bool
				if s, ok = strings.CutPrefix(s, scope); !ok {
					continue
				}
			} else if strings.HasPrefix(s, ":root") {
				continue
			}
			if out[s] == nil {
				out[s] = map[string]string{}
			}
			for k, v := range r.decls {
				out[s][k] = v
			}
		}
	}
	return out
}

// Every token class has a colour in both themes, each at least 4.5:1
// against the code background and the diff lines' tints it may be drawn
// on (or against its own background), and code keeps its background in
// both themes.
func TestHighlightCSSContrast(t *testing.T) {
	css, err := CSS()
	if err != nil {
		t.Fatal(err)
	}
	rules, media := parseCSS(t, css)
	themes := []struct {
		name string
		// The rules of a theme; the dark one is written twice, by the
		// reader's preference and by the toggle, and both must agree.
		styles []map[string]map[string]string
		bg     string
	}{
		{"light", []map[string]map[string]string{themeStyles(rules, media, "", "")}, "#f6f8fa"},
		{"dark", []map[string]map[string]string{
			themeStyles(rules, media, `:root:not([data-theme="light"]) `, "(prefers-color-scheme: dark)"),
			themeStyles(rules, media, `:root[data-theme="dark"] `, ""),
		}, "#161b22"},
	}
	classes := Classes()
	if len(classes) < 70 {
		t.Fatalf("Classes lists %d classes, want chroma's every token class", len(classes))
	}
	for _, th := range themes {
		for _, styles := range th.styles {
			for _, sel := range []string{".chroma", ".statement pre", ".diff pre", "pre.statement-plain"} {
				if got := styles[sel]["background-color"]; got != th.bg {
					t.Errorf("%s: %s has background %q, want %s", th.name, sel, got, th.bg)
				}
			}
			lineBg := func(class string) string { return styles[".chroma ."+class]["background-color"] }
			for _, class := range classes {
				s := styles[".chroma ."+class]
				colour := s["color"]
				if colour == "" {
					t.Errorf("%s: .%s has no colour", th.name, class)
					continue
				}
				var against []string
				switch bg := s["background-color"]; bg {
				case "", "transparent":
					// Tokens are drawn on code and on inserted and
					// deleted diff lines.
					against = []string{th.bg, lineBg("gi"), lineBg("gd")}
				default:
					against = []string{bg}
				}
				for _, bg := range against {
					if c := contrastRatio(chroma.ParseColour(colour), chroma.ParseColour(bg)); c < minContrast {
						t.Errorf("%s: .%s %s on %s: contrast %.2f, want at least %.1f", th.name, class, colour, bg, c, minContrast)
					}
				}
			}
		}
		if len(th.styles) == 2 && !equalStyles(th.styles[0], th.styles[1]) {
			t.Errorf("%s: the theme by preference and by the toggle differ", th.name)
		}
	}
	// Nothing of one theme survives into the other: each sets every
	// property of a class that the other sets.
	light, dark := themes[0].styles[0], themes[1].styles[0]
	for _, class := range classes {
		l, d := light[".chroma ."+class], dark[".chroma ."+class]
		for k := range l {
			if _, ok := d[k]; !ok {
				t.Errorf(".%s: the light theme sets %s, the dark one does not", class, k)
			}
		}
		for k := range d {
			if _, ok := l[k]; !ok {
				t.Errorf(".%s: the dark theme sets %s, the light one does not", class, k)
			}
		}
	}
}

func equalStyles(a, b map[string]map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for sel, decls := range a {
		other := b[sel]
		if len(other) != len(decls) {
			return false
		}
		for k, v := range decls {
			if other[k] != v {
				return false
			}
		}
	}
	return true
}

// legible keeps a colour's hue and only darkens or lightens it, as little
// as reaches the target.
func TestLegible(t *testing.T) {
	light, dark := chroma.MustParseColour("#f6f8fa"), chroma.MustParseColour("#161b22")
	for _, c := range []struct {
		colour string
		bg     chroma.Colour
	}{{"#6a737d", light}, {"#ffffff", light}, {"#6e7681", dark}, {"#0550ae", dark}, {"#cf222e", dark}} {
		in := chroma.MustParseColour(c.colour)
		out := legible(in, []chroma.Colour{c.bg})
		if contrastRatio(out, c.bg) < targetContrast {
			t.Errorf("%s on %s: made %s, contrast %.2f", c.colour, c.bg, out, contrastRatio(out, c.bg))
		}
		h1, s1, _ := toHSL(in)
		h2, s2, _ := toHSL(out)
		if s1 > 0.05 && (abs(h1-h2) > 0.02 || abs(s1-s2) > 0.05) {
			t.Errorf("%s on %s: made %s, another hue (%.3f %.3f → %.3f %.3f)", c.colour, c.bg, out, h1, s1, h2, s2)
		}
	}
	// Already legible: unchanged.
	if got := legible(chroma.MustParseColour("#1f2328"), []chroma.Colour{light}); got != chroma.MustParseColour("#1f2328") {
		t.Errorf("a legible colour changed to %s", got)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
