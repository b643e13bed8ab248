package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"regexp"
	"strings"
	"time"
)

// Where a dataset's environments come from: Manifest.Images.
const (
	// ImagesBuild: cmd/eval builds each repository's environment image
	// from its [repositories.source] and [repositories.environment] (the
	// default).
	ImagesBuild = "build"
	// ImagesInstance: each instance's image_name is its environment, an
	// image in a registry holding the complete project in /testbed, as
	// FeatureBench publishes its tasks; it is pulled through the engine.
	ImagesInstance = "instance"
)

// ImagesOrDefault is Images with its default filled in.
func (m *Manifest) ImagesOrDefault() string {
	if m.Images == "" {
		return ImagesBuild
	}
	return m.Images
}

// TestSettings are what FeatureBench's repo_settings say about running an
// instance's tests, as cmd/eval uses them (its own runner, plugin and guard
// run pytest; these only add to it).
type TestSettings struct {
	// Python is the interpreter test_cmd names by path ("" when it runs
	// pytest or python from $PATH).
	Python string
	// Args are test_cmd's options the harness passes on to pytest.
	Args []string
	// Test bounds one test (timeout_one, pytest-timeout); Run one pytest
	// run (timeout_run). 0 when not given.
	Test, Run time.Duration
}

// repoSettings is what TestSettings reads of repo_settings.
type repoSettings struct {
	TestCmd    *string  `json:"test_cmd"`
	TimeoutRun *float64 `json:"timeout_run"`
	TimeoutOne *float64 `json:"timeout_one"`
}

// ownOptions are test_cmd's options the harness's pytest command already
// has (internal/pytest.Command), dropped.
var ownOptions = regexp.MustCompile(`^(-rA|-ra|--color=.*|--timeout=.*|--junit-?xml=.*|-p no:cacheprovider)$`)

// passedOptions are the pytest options of a test_cmd the harness passes
// on: they change what pytest prints or selects, not how it is started or
// what it loads (plugins, configuration files, the root folder are the
// harness's). Those taking a value are listed in takesValue.
var passedOptions = map[string]bool{
	"-v": true, "-vv": true, "-vvv": true, "-q": true, "-qq": true, "-s": true, "-x": true, "-l": true,
	"--verbose": true, "--quiet": true, "--exitfirst": true, "--showlocals": true, "--disable-warnings": true,
	"--disable-pytest-warnings": true, "--strict-markers": true, "--strict": true, "--no-header": true,
	"--no-summary": true, "--continue-on-collection-errors": true,
	"--tb": true, "-W": true, "--pythonwarnings": true, "-m": true, "-k": true, "--durations": true,
	"--capture": true, "--import-mode": true, "--maxfail": true, "-o": true, "--override-ini": true,
}

// takesValue are passedOptions whose value may be the next word.
var takesValue = map[string]bool{"--tb": true, "-W": true, "--pythonwarnings": true, "-m": true, "-k": true,
	"--durations": true, "--capture": true, "--import-mode": true, "--maxfail": true, "-o": true, "--override-ini": true}

// TestSettings reads the instance's repo_settings: a JSON object, or
// FeatureBench's JSON string holding one. Missing fields are zero. An
// error names the setting.
func (in *Instance) TestSettings() (TestSettings, error) {
	var ts TestSettings
	raw := bytes.TrimSpace(in.RepoSettings)
	if len(raw) == 0 || string(raw) == "null" {
		return ts, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return ts, err
		}
		raw = bytes.TrimSpace([]byte(s))
		if len(raw) == 0 {
			return ts, nil
		}
	}
	if raw[0] != '{' {
		return ts, fmt.Errorf("is not a JSON object (or a string holding one)")
	}
	var rs repoSettings
	if err := json.Unmarshal(raw, &rs); err != nil {
		return ts, fmt.Errorf("does not decode: %v", err)
	}
	for _, t := range []struct {
		name string
		v    *float64
		d    *time.Duration
	}{{"timeout_one", rs.TimeoutOne, &ts.Test}, {"timeout_run", rs.TimeoutRun, &ts.Run}} {
		if t.v == nil {
			continue
		}
		if math.IsNaN(*t.v) || *t.v < 0 || *t.v > 7*24*3600 {
			return ts, fmt.Errorf("%s is %v; want seconds from 0 to a week", t.name, *t.v)
		}
		*t.d = time.Duration(*t.v * float64(time.Second))
	}
	if rs.TestCmd != nil {
		py, args, err := pytestArgs(*rs.TestCmd)
		if err != nil {
			return ts, fmt.Errorf("test_cmd %q: %v", *rs.TestCmd, err)
		}
		ts.Python, ts.Args = py, args
	}
	return ts, nil
}

// pytestArgs reads a test command: "pytest OPTIONS" or
// "PYTHON -m pytest OPTIONS", with words quoted as a shell would. It
// returns the interpreter when named by an absolute path, and the
// options to pass on; an option the harness cannot pass on (a plugin, a
// configuration file, a root folder: what its runner decides) is an error.
func pytestArgs(cmd string) (python string, args []string, err error) {
	words, err := shellWords(cmd)
	if err != nil {
		return "", nil, err
	}
	switch {
	case len(words) >= 1 && path.Base(words[0]) == "pytest":
		words = words[1:]
	case len(words) >= 3 && isPython(words[0]) && words[1] == "-m" && words[2] == "pytest":
		if path.IsAbs(words[0]) {
			python = words[0]
		}
		words = words[3:]
	default:
		return "", nil, fmt.Errorf("is not \"pytest …\" or \"python -m pytest …\"")
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "-p" && i+1 < len(words) && words[i+1] == "no:cacheprovider" {
			i++
			continue
		}
		if ownOptions.MatchString(w) {
			continue
		}
		name, _, hasValue := strings.Cut(w, "=")
		if !strings.HasPrefix(w, "--") && len(w) > 2 && takesValue[w[:2]] {
			name, hasValue = w[:2], true // -Wignore, -kexpr
		}
		if !passedOptions[name] {
			if strings.HasPrefix(w, "-") {
				return "", nil, fmt.Errorf("the option %s is not one the harness passes on to pytest (it runs pytest with its own runner, plugins and root folder)", w)
			}
			return "", nil, fmt.Errorf("names %s; the harness names the test files itself", w)
		}
		args = append(args, w)
		if takesValue[name] && !hasValue {
			if i+1 >= len(words) {
				return "", nil, fmt.Errorf("the option %s lacks its value", w)
			}
			i++
			args = append(args, words[i])
		}
	}
	return python, args, nil
}

var pythonName = regexp.MustCompile(`^python(3(\.[0-9]+)?)?$`)

func isPython(word string) bool { return pythonName.MatchString(path.Base(word)) }

// shellWords splits s into words as sh would for plain words, single and
// double quotes and backslashes; anything a shell would expand or run
// ($, `, ;, |, &, <, >, newlines) is an error, not a word.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in := false // inside a word
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("an unclosed single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if strings.IndexByte("$`", s[i]) >= 0 {
					return nil, fmt.Errorf("%q inside double quotes would be expanded by a shell", s[i])
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\`, s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("an unclosed double quote")
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case strings.IndexByte("$`;|&<>\n(){}*?[", c) >= 0:
			return nil, fmt.Errorf("%q would be read by a shell, not passed to pytest", c)
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
