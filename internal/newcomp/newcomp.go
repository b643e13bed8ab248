// Package newcomp is FEA-Bench's new-components method (paper 004, section
// 3.3 and appendix A) apart from the machinery it shares with the other
// history-based method: which pull requests it keeps (new components over
// MinShare of the edited lines, a new feature by intent) and the statement
// it gives (the feature request and the definitions of the new
// components, checked for leaks).
//
// The components themselves come from internal/components; running the
// tests before and after is the collection pipeline's.
package newcomp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/featbench/featbench/internal/llm"
)

// MinShare is FEA-Bench's threshold: new components must account for more
// than this part of the code patch's edited lines.
const MinShare = 0.25

// Chatter is what the method needs of an LLM: llm.Client.
type Chatter interface {
	Chat(ctx context.Context, msgs []llm.Message) (llm.Reply, error)
}

// Intent is what a pull request is for, as the classifier says.
type Intent struct {
	Feature bool   `json:"feature"`
	Label   string `json:"label"`  // new feature, bug fix, refactoring, documentation, tests, maintenance, performance
	By      string `json:"by"`     // "llm" or "rules"
	Reason  string `json:"reason"` // one line
}

// Intent labels: only LabelFeature is kept.
const (
	LabelFeature  = "new feature"
	LabelFix      = "bug fix"
	LabelRefactor = "refactoring"
	LabelDocs     = "documentation"
	LabelTests    = "tests"
	LabelMaint    = "maintenance"
	LabelPerf     = "performance"
)

var labels = []string{LabelFeature, LabelFix, LabelRefactor, LabelDocs, LabelTests, LabelMaint, LabelPerf}

// intentPrompt asks for one label. Written for this project: it says what
// counts as a feature (new behaviour a user can call) and what does not,
// which is what the paper's classifier has to decide.
const intentPrompt = `Below is a pull request of the Python project %s: its title, its description, and the names of the functions, classes and methods it adds.

Decide what the pull request is mainly for. Choose one label:
- "new feature": it adds behaviour users of the library can call or configure that was not there before (a new function, class, method, option or format).
- "bug fix": it makes existing behaviour correct.
- "refactoring": it reorganises code without new behaviour for users (renames, moves, splitting functions, internal helpers).
- "documentation", "tests", "maintenance" (packaging, CI, dependencies, style) or "performance".

Answer with a JSON object alone: {"label": "<one label>", "reason": "<one sentence>"}.

Title: %s

Description:
%s

Added: %s
`

// ClassifyIntent asks the LLM for the pull request's intent; without one
// (chat nil) the rules decide (RulesIntent). An answer that is not one of
// the labels is an error (the caller may fall back to the rules).
func ClassifyIntent(ctx context.Context, chat Chatter, project, title, body string, added []string) (Intent, error) {
	if chat == nil {
		return RulesIntent(title, body), nil
	}
	names := strings.Join(added, ", ")
	if names == "" {
		names = "(nothing)"
	}
	prompt := fmt.Sprintf(intentPrompt, project, oneLine(title), clipText(body, 6000), clipText(names, 2000))
	reply, err := chat.Chat(ctx, []llm.Message{{Role: "user", Content: prompt}})
	if err != nil {
		return Intent{}, err
	}
	raw, err := llm.ExtractJSONBlock(reply.Content)
	if err != nil {
		return Intent{}, err
	}
	var ans struct{ Label, Reason string }
	if err := json.Unmarshal(raw, &ans); err != nil {
		return Intent{}, fmt.Errorf("the intent answer: %w", err)
	}
	label := strings.ToLower(strings.TrimSpace(ans.Label))
	for _, l := range labels {
		if label == l {
			return Intent{Feature: l == LabelFeature, Label: l, By: "llm", Reason: oneLine(ans.Reason)}, nil
		}
	}
	return Intent{}, fmt.Errorf("the intent answer's label %q is none of %s", ans.Label, strings.Join(labels, ", "))
}

var (
	// Title words that say what a change is for, first word first.
	notFeatureTitle = regexp.MustCompile(`(?i)^\W*(fix(es|ed)?|bug(fix)?|hotfix|revert(s|ed)?|doc(s|umentation)?|typo|test(s|ing)?|ci|bump(s|ed)?|release|prepare|update (the )?(changelog|docs|readme|version)|refactor(s|ed|ing)?|clean ?up|lint|format(ting)?|style|chore|deprecat(e|es|ed|ion)|remove[sd]?|drop(s|ped)?|rename[sd]?|move[sd]?|perf(ormance)?|speed ?up|optimi[sz]e[sd]?|merge|pin|upgrade|migrate)\b`)
	featureWords    = regexp.MustCompile(`(?i)\b(add(s|ed|ing)?|new|implement(s|ed|ing)?|introduc(e|es|ed|ing)|support(s|ed|ing)?|feature|allow(s|ed|ing)?|enable[sd]?|provide[sd]?|expose[sd]?|extend(s|ed)?|option)\b`)
	notFeatureWords = regexp.MustCompile(`(?i)\b(fix(es|ed)?|bug|regression|crash|broken|typo|refactor(s|ed|ing)?|deprecat\w*|revert\w*)\b`)
)

// RulesIntent decides offline, from the title's first word and keywords:
// a title that opens with a fix, a revert, documentation, tests,
// refactoring, maintenance or performance is not a feature; else a title
// (or, lacking feature words there, a description's first paragraph)
// with a feature word and no bug word is one. Anything else is not.
func RulesIntent(title, body string) Intent {
	t := oneLine(title)
	if m := notFeatureTitle.FindString(t); m != "" {
		return Intent{Label: "not a feature", By: "rules", Reason: fmt.Sprintf("the title starts with %q", strings.TrimSpace(m))}
	}
	if w := featureWords.FindString(t); w != "" {
		if b := notFeatureWords.FindString(t); b != "" {
			return Intent{Label: "not a feature", By: "rules", Reason: fmt.Sprintf("the title says %q", b)}
		}
		return Intent{Feature: true, Label: LabelFeature, By: "rules", Reason: fmt.Sprintf("the title says %q", w)}
	}
	para, _, _ := strings.Cut(strings.TrimSpace(body), "\n\n")
	if w := featureWords.FindString(para); w != "" && notFeatureWords.FindString(para) == "" && notFeatureWords.FindString(t) == "" {
		return Intent{Feature: true, Label: LabelFeature, By: "rules", Reason: fmt.Sprintf("the description says %q", w)}
	}
	return Intent{Label: "not a feature", By: "rules", Reason: "neither the title nor the description names a new feature"}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[…]"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
