package collect

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Checks of the statements of the history-based methods, which are
// written from a pull request (by an LLM or by rules) and must not give
// its solution or its tests away.

// minLeak is the shortest line (in characters other than spaces) that
// counts as a line of a patch found in a statement: shorter ones
// ("return x", "pass") are words a request may well use.
const minLeak = 12

// leaks says how a statement gives a patch away: it holds a line the code
// patch adds, or one the test patch adds (a hunk of it), as written,
// spaces aside. "" when it holds none.
func leaks(statement, code, test string) string {
	norm := squash(statement)
	for _, p := range []struct{ name, diff string }{{"the code patch", code}, {"the test patch", test}} {
		for _, l := range strings.Split(p.diff, "\n") {
			if !strings.HasPrefix(l, "+") || strings.HasPrefix(l, "+++") {
				continue
			}
			line := squash(l[1:])
			if len(strings.ReplaceAll(line, " ", "")) < minLeak {
				continue
			}
			if strings.Contains(norm, line) {
				return fmt.Sprintf("it holds a line of %s: %q", p.name, oneLine(line, 80))
			}
		}
	}
	return ""
}

// squash collapses runs of white space, for comparing text with code.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

func oneLine(s string, n int) string {
	line, _ := summary(s)
	if len(line) > n {
		line = line[:n] + "…"
	}
	return line
}

var (
	codeStatement = regexp.MustCompile(`^\s*(?:def |class |async def |import \w|from [\w.]+ import |return\b|raise \w|yield\b|lambda\b|assert |@\w+(?:\(|$)|if .*:\s*$|elif .*:\s*$|else:\s*$|for .*:\s*$|while .*:\s*$|with .*:\s*$|try:\s*$|except\b.*:\s*$|>>> |\.\.\. )`)
	codeSyntax    = regexp.MustCompile(`(?:==|!=|<=|>=|\+=|-=|->|\*\*kwargs|\*args|\w\[[^\]\s]*\]\s*=|^\s*\w+\s*=\s*\S+\s*$)`)
	codeCall      = regexp.MustCompile(`\b[A-Za-z_][\w.]*\([^()\n]*(?:=|['"]|\d|\[|,)[^()\n]*\)`)
	codeSpanRe    = regexp.MustCompile("`([^`\n]+)`")
	plainName     = regexp.MustCompile(`^[A-Za-z_][\w.]*(?:\(\))?$`)
)

// hasCode says why a request holds code ("" when it holds none): a fenced
// or indented block, a line that is a Python statement, an expression
// with operators or a call with arguments, a code span that is more than
// a name. Names of functions, classes and parameters, which a user may
// write, are not code.
func hasCode(text string) string {
	if strings.Contains(text, "```") || strings.Contains(text, "~~~") {
		return "it holds a code block"
	}
	indented := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t") {
			if indented++; indented >= 2 {
				return "it holds an indented code block"
			}
		} else {
			indented = 0
		}
		if codeStatement.MatchString(l) {
			return fmt.Sprintf("it holds code: %q", oneLine(l, 80))
		}
	}
	for _, m := range codeSpanRe.FindAllStringSubmatch(text, -1) {
		if !plainName.MatchString(strings.TrimSpace(m[1])) {
			return fmt.Sprintf("it holds code: %q", oneLine(m[0], 80))
		}
	}
	outside := codeSpanRe.ReplaceAllString(text, "")
	if m := codeCall.FindString(outside); m != "" {
		return fmt.Sprintf("it holds code: %q", oneLine(m, 80))
	}
	for _, l := range strings.Split(outside, "\n") {
		if m := codeSyntax.FindString(l); m != "" && strings.ContainsAny(l, "=<>-*[") {
			return fmt.Sprintf("it holds code: %q", oneLine(l, 80))
		}
	}
	return ""
}

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	fenceBlock  = regexp.MustCompile("(?s)(```|~~~).*?(```|~~~)")
	checkbox    = regexp.MustCompile(`^\s*[-*]\s*\[[ xX]\]`)
	templateKey = regexp.MustCompile(`(?i)^\s*(?:#+\s*)?(?:checklist|fixes|closes|resolves|related|refs?|see also|signed-off-by|co-authored-by|reviewed-by|cc)\b[:\s#]`)
	mdImage     = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	urlRe       = regexp.MustCompile(`<?https?://\S+>?`)
	prRefRe     = regexp.MustCompile(`\(?#\d+\)?`)
)

// proseOf is the prose of a pull request's text: code blocks, indented
// code, doctest lines, HTML comments, checklists, trailers, links and
// references taken out; code spans that are names kept as names, others
// taken out; sentences that still read as code dropped.
func proseOf(text string) string {
	text = htmlComment.ReplaceAllString(text, "")
	text = fenceBlock.ReplaceAllString(text, "")
	text = mdImage.ReplaceAllString(text, "")
	var paras []string
	for _, para := range strings.Split(text, "\n\n") {
		var keep []string
		for _, l := range strings.Split(para, "\n") {
			t := strings.TrimSpace(l)
			switch {
			case t == "", checkbox.MatchString(l), templateKey.MatchString(l),
				strings.HasPrefix(l, "    "), strings.HasPrefix(l, "\t"), codeStatement.MatchString(l):
				continue
			}
			t = codeSpanRe.ReplaceAllStringFunc(t, func(s string) string {
				inner := strings.Trim(s, "`")
				if plainName.MatchString(inner) {
					return inner
				}
				return ""
			})
			t = urlRe.ReplaceAllString(t, "")
			t = prRefRe.ReplaceAllString(t, "")
			t = strings.TrimLeft(t, "#>*- ")
			t = squash(t)
			if t == "" || hasCode(t) != "" {
				continue
			}
			keep = append(keep, t)
		}
		if len(keep) > 0 {
			paras = append(paras, strings.Join(keep, " "))
		}
	}
	out := strings.Join(paras, "\n\n")
	if len(out) > 6000 {
		out = out[:6000]
		if i := strings.LastIndexAny(out, ".!?"); i > 0 {
			out = out[:i+1]
		}
	}
	return out
}

func encodeJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	return b, nil
}
