package pytest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// junitSuite is what a JUnit XML file holds.
type junitSuite struct {
	present  bool // the file was there and not empty
	complete bool // the document ended properly
	err      error
	tests    int
	failures int
	errors   int
	skipped  int
	seconds  float64
	cases    []junitCase
}

type junitCase struct {
	Classname  string          `xml:"classname,attr"`
	Name       string          `xml:"name,attr"`
	File       string          `xml:"file,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Failures   []junitChild    `xml:"failure"`
	Errors     []junitChild    `xml:"error"`
	Skipped    []junitChild    `xml:"skipped"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitChild struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func (c *junitCase) prop(name string) (string, bool) {
	for _, p := range c.Properties {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// parseJUnit reads the testcases of a JUnit XML document. It stops at the
// first malformed or truncated part and keeps every testcase read whole
// before it: a pytest killed while writing leaves a prefix.
func parseJUnit(data []byte) junitSuite {
	var s junitSuite
	if len(bytes.TrimSpace(data)) == 0 {
		return s
	}
	s.present = true
	d := xml.NewDecoder(bytes.NewReader(data))
	depth := 0
	for {
		tok, err := d.Token()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.err = err
			} else if depth != 0 || !s.complete {
				s.err = io.ErrUnexpectedEOF
			}
			return s
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "testsuite":
				s.readSuiteAttrs(t.Attr)
				depth++
			case "testcase":
				var c junitCase
				if err := d.DecodeElement(&c, &t); err != nil {
					s.err = fmt.Errorf("testcase %d: %w", len(s.cases)+1, err)
					return s
				}
				s.cases = append(s.cases, c)
			default:
				depth++
			}
		case xml.EndElement:
			depth--
			if depth == 0 {
				// The root closed (<testsuites>, or a bare <testsuite>
				// as pytest wrote before 5.1): the document is whole.
				s.complete = true
			}
		}
	}
}

func (s *junitSuite) readSuiteAttrs(attrs []xml.Attr) {
	for _, a := range attrs {
		n, _ := strconv.Atoi(a.Value)
		switch a.Name.Local {
		case "tests":
			s.tests += n
		case "failures":
			s.failures += n
		case "errors":
			s.errors += n
		case "skipped":
			s.skipped += n
		case "time":
			f, _ := strconv.ParseFloat(a.Value, 64)
			s.seconds += f
		}
	}
}

// mangle turns a node id into JUnit's (classname, name) exactly as pytest's
// junitxml.mangle_test_address does (unchanged from 7.2 to 9.x): split at
// the first "[", then at "::"; the file path's "/" become "." and a final
// ".py" goes; the parameters stay in the name. The inverse is ambiguous,
// which is why ids are mangled forward and looked up.
func mangle(nodeid string) (classname, name string) {
	path, params, bracket := strings.Cut(nodeid, "[")
	names := strings.Split(path, "::")
	names[0] = strings.TrimSuffix(strings.ReplaceAll(names[0], "/", "."), ".py")
	last := names[len(names)-1]
	if bracket {
		last += "[" + params
	}
	return strings.Join(names[:len(names)-1], "."), binXMLEscape(last)
}

// binXMLEscape is pytest's bin_xml_escape: characters outside the set its
// (buggy) regular expression allows become the text "#xNN" or "#xNNNN". The
// set is \t \n \r and U+0020-U+D7FF, U+E000-U+FFFD: the intended
// supplementary range is mistyped as "\u10000-\u10FFFF", which Python
// reads as U+1000, "0"-U+10FF, "F", "F".
func binXMLEscape(s string) string {
	ok := func(r rune) bool {
		return r == '\t' || r == '\n' || r == '\r' ||
			(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD)
	}
	if strings.IndexFunc(s, func(r rune) bool { return !ok(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case ok(r):
			b.WriteRune(r)
		case r <= 0xFF:
			fmt.Fprintf(&b, "#x%02X", r)
		default:
			fmt.Fprintf(&b, "#x%04X", r)
		}
	}
	return b.String()
}

// junitKey is a testcase's identity in the XML.
type junitKey struct{ classname, name string }

func keyOf(nodeid string) junitKey {
	c, n := mangle(nodeid)
	return junitKey{c, n}
}

// groupPrefix is the dotted classname prefix of the tests under a file or
// class id: "tests/test_x.py" gives "tests.test_x".
func groupPrefix(id string) string {
	c, n := mangle(id)
	if c == "" {
		return n
	}
	return c + "." + n
}
