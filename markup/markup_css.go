package markup

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/styles"
)

// minContrast is the WCAG AA contrast for normal text, which every token
// colour must reach against every background it is drawn on. The colours
// are adjusted to a little more, so that rounding in a browser's own
// computation cannot put one below.
const (
	minContrast    = 4.5
	targetContrast = 4.6
)

// codeTheme is one of the site's two colour schemes for code: a chroma
// style, and the background and text colours of site/assets/style.css
// (--soft and --fg) that code is drawn on.
type codeTheme struct {
	style  *chroma.Style
	bg, fg chroma.Colour
	// lines styles the diff line classes, replacing the style's entries:
	// tinted backgrounds with ordinary text, as GitHub shows a patch, so
	// that the highlighted tokens inside a line keep their own colours.
	lines map[chroma.TokenType]chroma.StyleEntry
	// dark selects the theme by the reader's preference or the toggle.
	dark bool
}

func codeThemes() [2]codeTheme {
	c := chroma.MustParseColour
	return [2]codeTheme{
		{
			style: styles.Get("github"), bg: c("#f6f8fa"), fg: c("#1f2328"),
			lines: map[chroma.TokenType]chroma.StyleEntry{
				chroma.GenericInserted:   {Colour: c("#1f2328"), Background: c("#dafbe1")},
				chroma.GenericDeleted:    {Colour: c("#1f2328"), Background: c("#ffebe9")},
				chroma.GenericHeading:    {Colour: c("#1f2328"), Bold: chroma.Yes},
				chroma.GenericSubheading: {Colour: c("#59636e"), Background: c("#ddf4ff")},
			},
		},
		{
			style: styles.Get("github-dark"), bg: c("#161b22"), fg: c("#e6edf3"), dark: true,
			// GitHub's translucent diff tints, composed over #161b22.
			lines: map[chroma.TokenType]chroma.StyleEntry{
				chroma.GenericInserted:   {Colour: c("#e6edf3"), Background: c("#1a2f27")},
				chroma.GenericDeleted:    {Colour: c("#e6edf3"), Background: c("#382328")},
				chroma.GenericHeading:    {Colour: c("#e6edf3"), Bold: chroma.Yes},
				chroma.GenericSubheading: {Colour: c("#9198a1"), Background: c("#1b2433")},
			},
		},
	}
}

// highlightTypes is every token type that has a CSS class, in order.
func highlightTypes() []chroma.TokenType {
	// chroma's types for the formatter's own wrappers (line numbers, line
	// spans, the pre), not for code.
	structuralTypes := []chroma.TokenType{
		chroma.Background, chroma.PreWrapper, chroma.Line, chroma.LineNumbers, chroma.LineNumbersTable,
		chroma.LineHighlight, chroma.LineTable, chroma.LineTableTD, chroma.LineLink, chroma.CodeLine,
	}
	var types []chroma.TokenType
	for t, class := range chroma.StandardTypes {
		if class != "" && !slices.Contains(structuralTypes, t) {
			types = append(types, t)
		}
	}
	slices.Sort(types)
	return types
}

// Classes lists the CSS class of every token type the highlighter
// can emit, each of which CSS colours in both themes.
func Classes() []string {
	var classes []string
	for _, t := range highlightTypes() {
		classes = append(classes, chroma.StandardTypes[t])
	}
	return classes
}

// tokenStyle is what a theme draws one token class with.
type tokenStyle struct {
	colour, background      chroma.Colour // background unset: the code background
	bold, italic, underline bool
}

// styleOf resolves a token type's style in a theme: the style's own entry
// with inheritance (style.Get), the theme's text colour where the style
// gives none, the diff line overrides, and the colour made legible.
func (th codeTheme) styleOf(t chroma.TokenType) tokenStyle {
	e, ok := th.lines[t]
	if !ok {
		e = th.style.Get(t)
	}
	s := tokenStyle{colour: e.Colour, background: e.Background,
		bold: e.Bold == chroma.Yes, italic: e.Italic == chroma.Yes, underline: e.Underline == chroma.Yes}
	if s.background == th.style.Get(chroma.Background).Background {
		s.background = 0 // the style's own page background: ours instead
	}
	if !s.colour.IsSet() {
		s.colour = th.fg
	}
	s.colour = legible(s.colour, th.backgrounds(s.background))
	return s
}

// backgrounds is what a token drawn with background bg can sit on: its
// own background if it has one, else the code background and the tinted
// diff lines, where highlighted tokens are drawn too.
func (th codeTheme) backgrounds(bg chroma.Colour) []chroma.Colour {
	if bg.IsSet() {
		return []chroma.Colour{bg}
	}
	return []chroma.Colour{th.bg, th.lines[chroma.GenericInserted].Background, th.lines[chroma.GenericDeleted].Background}
}

// CSS is the stylesheet for highlighted code: the light theme, and
// the dark one applied by the reader's preference or the theme toggle.
// Each theme sets every token class's colour (and the weight, slant,
// underline and background that either theme sets, so that nothing of one
// theme survives into the other), every colour at least minContrast
// against the backgrounds it is drawn on, and the code background itself:
// chroma's styles would draw code on the page's own background.
func CSS() (string, error) {
	themes := codeThemes()
	for _, th := range themes {
		if th.style == nil {
			return "", fmt.Errorf("writing highlight CSS: a chroma style is missing")
		}
	}
	types := highlightTypes()
	// The elements code is drawn in: chroma's pre, and the statement's
	// and the diff's pre elements whatever their class.
	codeBackground := []string{".chroma", ".statement pre", ".diff pre", "pre.statement-plain"}
	var b strings.Builder
	b.WriteString("/* code highlighting: chroma's github and github-dark styles, each colour at least 4.5:1 against the code background (generated, markup/markup_css.go) */\n")
	b.WriteString(".chroma { -webkit-text-size-adjust: none; }\n")
	b.WriteString(".chroma .line { display: flex; }\n")
	// A diff line's tint spans the whole width, also when scrolled.
	b.WriteString(".diff pre > code { display: inline-block; min-width: 100%; }\n")
	b.WriteString(".diff .gi, .diff .gd, .diff .gh, .diff .gu { display: inline-block; min-width: 100%; }\n")
	b.WriteString("pre.statement-plain { white-space: pre-wrap; }\n")
	for i, th := range themes {
		other := themes[1-i]
		var rules strings.Builder
		fmt.Fprintf(&rules, "%s { background-color: %s; color: %s; }\n",
			scopeSelectors(codeBackground, th.dark), th.bg, th.fg)
		// Classes with the same declarations share a rule.
		var order []string
		groups := map[string][]string{}
		for _, t := range types {
			decl := declarations(th.styleOf(t), other.styleOf(t))
			if _, ok := groups[decl]; !ok {
				order = append(order, decl)
			}
			groups[decl] = append(groups[decl], ".chroma ."+chroma.StandardTypes[t])
		}
		for _, decl := range order {
			fmt.Fprintf(&rules, "%s { %s }\n", scopeSelectors(groups[decl], th.dark), decl)
		}
		if !th.dark {
			b.WriteString(rules.String())
			continue
		}
		// Dark twice: by preference unless the toggle says light, and by
		// the toggle.
		b.WriteString("@media (prefers-color-scheme: dark) {\n")
		b.WriteString(strings.ReplaceAll(rules.String(), darkScope, darkPreferenceScope))
		b.WriteString("}\n")
		b.WriteString(rules.String())
	}
	return b.String(), nil
}

const (
	darkScope           = `:root[data-theme="dark"] `
	darkPreferenceScope = `:root:not([data-theme="light"]) `
)

func scopeSelectors(sels []string, dark bool) string {
	if !dark {
		return strings.Join(sels, ", ")
	}
	scoped := make([]string, len(sels))
	for i, s := range sels {
		scoped[i] = darkScope + s
	}
	return strings.Join(scoped, ", ")
}

// declarations writes a token style, with the reset of each property the
// other theme sets and this one does not.
func declarations(s, other tokenStyle) string {
	d := []string{"color: " + s.colour.String() + ";"}
	switch {
	case s.background.IsSet():
		d = append(d, "background-color: "+s.background.String()+";")
	case other.background.IsSet():
		d = append(d, "background-color: transparent;")
	}
	switch {
	case s.bold:
		d = append(d, "font-weight: bold;")
	case other.bold:
		d = append(d, "font-weight: normal;")
	}
	switch {
	case s.italic:
		d = append(d, "font-style: italic;")
	case other.italic:
		d = append(d, "font-style: normal;")
	}
	switch {
	case s.underline:
		d = append(d, "text-decoration: underline;")
	case other.underline:
		d = append(d, "text-decoration: none;")
	}
	return strings.Join(d, " ")
}

// plainTypes are the token types drawn exactly as plain text in both
// themes: a highlighter can leave their spans out.
func plainTypes() map[chroma.TokenType]bool {
	themes := codeThemes()
	plain := map[chroma.TokenType]bool{}
	for _, t := range highlightTypes() {
		ok := true
		for _, th := range themes {
			if th.styleOf(t) != (tokenStyle{colour: th.fg}) {
				ok = false
			}
		}
		plain[t] = ok
	}
	return plain
}

// legible returns c, or c made darker or lighter (keeping its hue and
// saturation) until it has at least targetContrast against each of bgs.
func legible(c chroma.Colour, bgs []chroma.Colour) chroma.Colour {
	worst := func(c chroma.Colour) float64 {
		w := math.Inf(1)
		for _, bg := range bgs {
			w = min(w, contrastRatio(c, bg))
		}
		return w
	}
	if worst(c) >= targetContrast {
		return c
	}
	// Away from the backgrounds' luminance: lighter on dark ones.
	var sum float64
	for _, bg := range bgs {
		sum += luminance(bg)
	}
	lighten := sum/float64(len(bgs)) < 0.18
	h, s, l := toHSL(c)
	lo, hi := l, 1.0 // lightness range searched, from c's own to the end
	if !lighten {
		lo, hi = 0, l
	}
	// The smallest change that reaches the target; contrast grows
	// monotonically with the distance from c's lightness.
	for range 40 {
		mid := (lo + hi) / 2
		ok := worst(fromHSL(h, s, mid)) >= targetContrast
		if ok == lighten {
			hi = mid
		} else {
			lo = mid
		}
	}
	if lighten {
		return fromHSL(h, s, hi)
	}
	return fromHSL(h, s, lo)
}

// luminance is WCAG 2's relative luminance.
func luminance(c chroma.Colour) float64 {
	lin := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.Red()) + 0.7152*lin(c.Green()) + 0.0722*lin(c.Blue())
}

// contrastRatio is WCAG 2's contrast ratio of two colours, from 1 to 21.
func contrastRatio(a, b chroma.Colour) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func toHSL(c chroma.Colour) (h, s, l float64) {
	r, g, b := float64(c.Red())/255, float64(c.Green())/255, float64(c.Blue())/255
	mx, mn := max(r, g, b), min(r, g, b)
	l = (mx + mn) / 2
	if mx == mn {
		return 0, 0, l
	}
	d := mx - mn
	if l > 0.5 {
		s = d / (2 - mx - mn)
	} else {
		s = d / (mx + mn)
	}
	switch mx {
	case r:
		h = (g - b) / d
		if g < b {
			h += 6
		}
	case g:
		h = (b-r)/d + 2
	default:
		h = (r-g)/d + 4
	}
	return h / 6, s, l
}

func fromHSL(h, s, l float64) chroma.Colour {
	if s == 0 {
		v := uint8(math.Round(l * 255))
		return chroma.NewColour(v, v, v)
	}
	var q float64
	if l < 0.5 {
		q = l * (1 + s)
	} else {
		q = l + s - l*s
	}
	p := 2*l - q
	hue := func(t float64) uint8 {
		switch {
		case t < 0:
			t++
		case t > 1:
			t--
		}
		var v float64
		switch {
		case t < 1.0/6:
			v = p + (q-p)*6*t
		case t < 1.0/2:
			v = q
		case t < 2.0/3:
			v = p + (q-p)*(2.0/3-t)*6
		default:
			v = p
		}
		return uint8(math.Round(v * 255))
	}
	return chroma.NewColour(hue(h+1.0/3), hue(h), hue(h-1.0/3))
}
