package patch

import "strings"

// File names are read from header lines as git's apply.c reads them
// (find_name, find_name_traditional, git_header_name), so that the paths
// reported are the ones `git apply -p1` would write. A line here never
// holds its newline.

// isGitSpace is git's isspace: space, tab, LF and CR only (not \v or \f).
func isGitSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// Name terminators of findNameCommon: which whitespace, besides CR and
// LF, ends a name.
const (
	termSpace = 1 << iota
	termTab
)

// unquoteC reads a C-quoted name at the start of s as git's
// unquote_c_style does: \a \b \f \n \r \t \v \\ \" and three octal
// digits, nothing else. It returns the name and the rest of s after the
// closing quote.
func unquoteC(s string) (name, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
		default:
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", "", false
		}
		switch c = s[i]; c {
		case 'a':
			c = '\a'
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'v':
			c = '\v'
		case '\\', '"':
		case '0', '1', '2', '3':
			if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
				return "", "", false
			}
			c = (c-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0')
			i += 2
		default:
			return "", "", false
		}
		b.WriteByte(c)
	}
	return "", "", false // no closing quote on the line
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// squashSlash turns runs of slashes into one, as git does to every name
// it reads from ---, +++, rename and copy lines.
func squashSlash(s string) string {
	if !strings.Contains(s, "//") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '/' && i > 0 && s[i-1] == '/' {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// stripComponents drops p leading components, or reports that s has
// fewer.
func stripComponents(s string, p int) (string, bool) {
	for ; p > 0; p-- {
		i := strings.IndexByte(s, '/')
		if i < 0 {
			return "", false
		}
		s = s[i+1:]
	}
	return s, true
}

// findNameCommon is git's find_name_common: the name at the start of
// line, p components stripped, ending at whitespace (as terminate says)
// or, when end >= 0, at byte end. def is preferred when the name is def
// with something tacked on ("x.py.orig"), and returned when no name is
// found.
func findNameCommon(line, def string, p, end, terminate int) string {
	start := -1
	if p == 0 {
		start = 0
	}
	i := 0
	limit := len(line)
	if end >= 0 {
		limit = end
	}
	for ; i < limit; i++ {
		c := line[i]
		if end < 0 && isGitSpace(c) {
			if c == '\n' || c == '\r' ||
				(c == ' ' && terminate&termSpace != 0) || (c == '\t' && terminate&termTab != 0) {
				break
			}
		}
		if c == '/' {
			p--
			if p == 0 {
				start = i + 1
			}
		}
	}
	if start < 0 || i-start <= 0 {
		return squashSlash(def)
	}
	name := line[start:i]
	if def != "" && len(def) < len(name) && strings.HasPrefix(name, def) {
		return squashSlash(def)
	}
	return squashSlash(name)
}

// findName is git's find_name: a quoted name if it unquotes and has p
// components to strip, otherwise the name as findNameCommon reads it.
func findName(line, def string, p, terminate int) string {
	if n, ok := findNameQuoted(line, p); ok {
		return n
	}
	return findNameCommon(line, def, p, -1, terminate)
}

func findNameQuoted(line string, p int) (string, bool) {
	if !strings.HasPrefix(line, `"`) {
		return "", false
	}
	n, _, ok := unquoteC(line)
	if !ok {
		return "", false
	}
	n, ok = stripComponents(n, p)
	if !ok {
		return "", false
	}
	return squashSlash(n), true
}

// findNameTraditional is git's find_name_traditional for the names of a
// diff without "diff --git": up to a tab, or before a timestamp that
// follows the name after spaces.
func findNameTraditional(line, def string, p int) string {
	if n, ok := findNameQuoted(line, p); ok {
		return n
	}
	if n := timestampLen(line); n > 0 {
		return findNameCommon(line, def, p, len(line)-n, 0)
	}
	return findNameCommon(line, def, p, -1, termTab)
}

// isDevNull is git's is_dev_null: "/dev/null" followed by whitespace or
// the end of the line.
func isDevNull(s string) bool {
	rest, ok := strings.CutPrefix(s, "/dev/null")
	return ok && (rest == "" || isGitSpace(rest[0]))
}

// guessP is git's guess_p_value for one side of a traditional diff:
// 0 when the name has no directory, else unknown (-1), since the harness
// runs git at the top of the repository.
func guessP(s string) int {
	if isDevNull(s) {
		return -1
	}
	n := findNameTraditional(s, "", 0)
	if n == "" {
		return -1
	}
	if !strings.Contains(n, "/") {
		return 0
	}
	return -1
}

// skipTreePrefix is git's skip_tree_prefix: s without its p leading
// components, or false when it has fewer or is absolute.
func skipTreePrefix(s string, p int) (string, bool) {
	if p == 0 {
		return s, !strings.HasPrefix(s, "/")
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			p--
			if p <= 0 {
				if i == 0 {
					return "", false
				}
				return s[i+1:], true
			}
		}
	}
	return "", false
}

// gitHeaderName is git's git_header_name: the name of "diff --git A B"
// (rest is what follows "diff --git ") when both sides name the same
// file, else "". A rename names its files on its own lines.
func gitHeaderName(rest string, p int) string {
	if strings.HasPrefix(rest, `"`) {
		first, after, ok := unquoteC(rest)
		if !ok {
			return ""
		}
		if first, ok = skipTreePrefix(first, p); !ok {
			return ""
		}
		after = strings.TrimLeft(after, " \t\r")
		if after == "" {
			return ""
		}
		var second string
		if strings.HasPrefix(after, `"`) {
			if second, _, ok = unquoteC(after); !ok {
				return ""
			}
		} else {
			second = after
		}
		if second, ok = skipTreePrefix(second, p); !ok || second != first {
			return ""
		}
		return first
	}
	name, ok := skipTreePrefix(rest, p)
	if !ok {
		return ""
	}
	// An unquoted first name: a quote starts the second.
	if q := strings.IndexByte(name, '"'); q >= 0 {
		sp, _, ok := unquoteC(name[q:])
		if !ok {
			return ""
		}
		np, ok := skipTreePrefix(sp, p)
		if !ok {
			return ""
		}
		if len(np) < q && strings.HasPrefix(name, np) && isGitSpace(name[len(np)]) {
			return np
		}
		return ""
	}
	// Both unquoted: accept a name only if it shows up twice, split at a
	// space or tab.
	for n := 0; n < len(name); n++ {
		if name[n] != ' ' && name[n] != '\t' {
			continue
		}
		if n+1 == len(name) {
			return ""
		}
		second, ok := skipTreePrefix(name[n+1:], p)
		if !ok {
			continue
		}
		if len(second) == n && name[:n] == second {
			return name[:n]
		}
	}
	return ""
}

// timestampLen is git's diff_timestamp_len: the length of a trailing
// "<sep>2010-07-05 19:41:17[.fraction] [-0500]" after a name, including
// the tab or spaces before it, or 0.
func timestampLen(line string) int {
	end := len(line)
	if end == 0 || !isDigit(line[end-1]) {
		return 0
	}
	n := tzLen(line[:end])
	if n == 0 {
		n = tzColonLen(line[:end])
	}
	end -= n
	n = shortTimeLen(line[:end])
	if n == 0 {
		n = fractionalTimeLen(line[:end])
	}
	end -= n
	n = dateLen(line[:end])
	if n == 0 {
		return 0
	}
	end -= n
	if end == 0 {
		return 0
	}
	if line[end-1] == '\t' {
		return len(line) - (end - 1)
	}
	if line[end-1] != ' ' {
		return 0
	}
	for end > 0 && line[end-1] == ' ' {
		end--
	}
	return len(line) - end
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// tzLen matches " +0500" at the end of s.
func tzLen(s string) int {
	const n = len(" +0500")
	if len(s) < n || s[len(s)-n] != ' ' {
		return 0
	}
	tz := s[len(s)-n:]
	if tz[1] != '+' && tz[1] != '-' || !allDigits(tz[2:]) {
		return 0
	}
	return n
}

// tzColonLen matches " +08:00" at the end of s.
func tzColonLen(s string) int {
	const n = len(" +08:00")
	if len(s) < n {
		return 0
	}
	tz := s[len(s)-n:]
	if tz[0] != ' ' || (tz[1] != '+' && tz[1] != '-') || !isDigit(tz[2]) || !isDigit(tz[3]) ||
		tz[4] != ':' || !isDigit(tz[5]) || !isDigit(tz[6]) {
		return 0
	}
	return n
}

// shortTimeLen matches " 07:01:32" at the end of s.
func shortTimeLen(s string) int {
	const n = len(" 07:01:32")
	if len(s) < n {
		return 0
	}
	t := s[len(s)-n:]
	if t[0] != ' ' || !isDigit(t[1]) || !isDigit(t[2]) || t[3] != ':' || !isDigit(t[4]) || !isDigit(t[5]) ||
		t[6] != ':' || !isDigit(t[7]) || !isDigit(t[8]) {
		return 0
	}
	return n
}

// fractionalTimeLen matches " 19:41:17.620000023" at the end of s.
func fractionalTimeLen(s string) int {
	if s == "" || !isDigit(s[len(s)-1]) {
		return 0
	}
	p := len(s) - 1
	for p > 0 && isDigit(s[p]) {
		p--
	}
	if s[p] != '.' {
		return 0
	}
	n := shortTimeLen(s[:p])
	if n == 0 {
		return 0
	}
	return len(s) - p + n
}

// dateLen matches "2010-07-05" (or "10-07-05") at the end of s.
func dateLen(s string) int {
	const n = len("72-02-05")
	if len(s) < n {
		return 0
	}
	d := s[len(s)-n:]
	if !isDigit(d[0]) || !isDigit(d[1]) || d[2] != '-' || !isDigit(d[3]) || !isDigit(d[4]) || d[5] != '-' ||
		!isDigit(d[6]) || !isDigit(d[7]) {
		return 0
	}
	start := len(s) - n
	if start >= 2 && isDigit(s[start-1]) && isDigit(s[start-2]) {
		return n + 2
	}
	return n
}

// hasEpochTimestamp is git's has_epoch_timestamp: GNU diff -N marks a
// created or deleted file with the epoch as its timestamp.
func hasEpochTimestamp(s string) bool {
	i := strings.LastIndexByte(s, '\t')
	if i < 0 {
		return false
	}
	ts := strings.TrimSuffix(s[i+1:], "\r")
	epochHour := 0
	switch {
	case strings.HasPrefix(ts, "1969-12-31 "):
		epochHour = 24
	case strings.HasPrefix(ts, "1970-01-01 "):
	default:
		return false
	}
	ts = ts[len("1970-01-01 "):]
	// hh:mm:00[.0+] [+-]hh[:]mm
	if len(ts) < 8 || !isDigit(ts[0]) || ts[0] > '2' || !isDigit(ts[1]) || ts[2] != ':' ||
		ts[3] < '0' || ts[3] > '5' || !isDigit(ts[4]) || ts[5:8] != ":00" {
		return false
	}
	hour := int(ts[0]-'0')*10 + int(ts[1]-'0')
	minute := int(ts[3]-'0')*10 + int(ts[4]-'0')
	rest := ts[8:]
	if strings.HasPrefix(rest, ".") {
		j := 1
		for j < len(rest) && rest[j] == '0' {
			j++
		}
		if j == 1 {
			return false
		}
		rest = rest[j:]
	}
	if len(rest) < 6 || rest[0] != ' ' || (rest[1] != '+' && rest[1] != '-') {
		return false
	}
	zone := rest[2:]
	var zh, zm int
	switch {
	case len(zone) == 4 && allDigits(zone) && zone[0] <= '2' && zone[2] <= '5':
		zh, zm = int(zone[0]-'0')*10+int(zone[1]-'0'), int(zone[2]-'0')*10+int(zone[3]-'0')
	case len(zone) == 5 && zone[2] == ':' && allDigits(zone[:2]) && allDigits(zone[3:]) && zone[0] <= '2' && zone[3] <= '5':
		zh, zm = int(zone[0]-'0')*10+int(zone[1]-'0'), int(zone[3]-'0')*10+int(zone[4]-'0')
	default:
		return false
	}
	offset := zh*60 + zm
	if rest[1] == '-' {
		offset = -offset
	}
	return hour*60+minute-offset == epochHour*60
}
