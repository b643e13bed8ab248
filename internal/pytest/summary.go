package pytest

import (
	"regexp"
	"strconv"
	"strings"
)

// termSummary is what pytest's terminal output says: the -rA short test
// summary and the final counts line.
type termSummary struct {
	found   bool // the "short test summary info" header was there
	entries []summaryEntry
	skipped map[string]int // SKIPPED [n] path:line: reason, by path
	final   bool           // the "N passed in 0.12s" line was there
	seconds float64
	counts  map[string]int
}

// summaryEntry is one status line of the summary, with the lines that
// continue its message (with CI set, pytest prints multi-line messages whole).
type summaryEntry struct {
	word  string // PASSED, FAILED, ERROR, XFAIL or XPASS
	first string // the rest of the status line: the id, then the message
	more  []string
}

var (
	reSummaryHeader = regexp.MustCompile(`^=+ short test summary info =+$`)
	reFinalLine     = regexp.MustCompile(`^=+ (.+) in ([0-9]+(?:\.[0-9]+)?)s(?: \([0-9:]+\))? =+$`)
	reSkippedLine   = regexp.MustCompile(`^SKIPPED \[(\d+)\] (.+?)(?::\d+)?: `)
	reCount         = regexp.MustCompile(`^(\d+) (\w+)$`)
)

var summaryWords = map[string]Status{
	"PASSED": StatusPassed,
	"FAILED": StatusFailed,
	"ERROR":  StatusError,
	"XFAIL":  StatusXFailed,
	"XPASS":  StatusXPassed,
}

func parseSummary(out []byte) termSummary {
	s := termSummary{skipped: map[string]int{}, counts: map[string]int{}}
	lines := strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n")
	header := -1
	for i, l := range lines {
		if reSummaryHeader.MatchString(l) {
			header = i
		}
		if m := reFinalLine.FindStringSubmatch(l); m != nil {
			s.final = true
			s.seconds, _ = strconv.ParseFloat(m[2], 64)
			s.counts = parseCounts(m[1])
		}
	}
	if header < 0 {
		return s
	}
	s.found = true
	for _, l := range lines[header+1:] {
		if strings.HasPrefix(l, "=") || strings.HasPrefix(l, "!") {
			break // the final line, or "!!! Interrupted: ... !!!"
		}
		if m := reSkippedLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			s.skipped[m[2]] += n
			continue
		}
		word, rest, _ := strings.Cut(l, " ")
		if _, ok := summaryWords[word]; ok {
			s.entries = append(s.entries, summaryEntry{word: word, first: rest})
			continue
		}
		if n := len(s.entries); n > 0 {
			s.entries[n-1].more = append(s.entries[n-1].more, l)
		}
	}
	return s
}

// parseCounts reads "10 failed, 2 passed, 1 warning" into {"failed": 10,
// "passed": 2, "warnings": 1}, keys as pytest's stats names them.
func parseCounts(text string) map[string]int {
	counts := map[string]int{}
	for _, part := range strings.Split(text, ", ") {
		m := reCount.FindStringSubmatch(strings.TrimSpace(part))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		key := m[2]
		switch key {
		case "errors":
			key = "error"
		case "warning":
			key = "warnings"
		}
		counts[key] += n
	}
	return counts
}

// resolve splits an entry into its id and message. The id is the longest
// known id that is the whole line or is followed by the separator (" - ";
// just " " for XPASS, which pytest 7 prints without the dash): ids hold
// spaces, "::" and " - " inside their parameters. An unknown id ends at the
// first separator outside square brackets.
func (e summaryEntry) resolve(known map[string]bool) (id, msg string) {
	sep := " - "
	if e.word == "XPASS" {
		sep = " "
	}
	line := e.first
	if known[line] {
		return line, e.message("")
	}
	best := -1
	for i := strings.Index(line, sep); i >= 0; {
		if known[line[:i]] {
			best = i
		}
		j := strings.Index(line[i+1:], sep)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	if best < 0 {
		depth := 0
		for i := 0; i < len(line); i++ {
			switch line[i] {
			case '[':
				depth++
			case ']':
				depth--
			}
			if depth <= 0 && strings.HasPrefix(line[i:], sep) {
				best = i
				break
			}
		}
	}
	if best < 0 {
		return line, e.message("")
	}
	rest := line[best+len(sep):]
	if e.word == "XPASS" {
		rest = strings.TrimPrefix(rest, "- ") // pytest 8 adds the dash
	}
	return line[:best], e.message(rest)
}

func (e summaryEntry) message(first string) string {
	if len(e.more) == 0 {
		return first
	}
	return strings.Join(append([]string{first}, e.more...), "\n")
}
