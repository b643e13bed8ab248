package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// The fast results decoder (encoding/json/v2 candidate) must read a file
// exactly as the line-by-line encoding/json path does, or decline it.
func TestDecodeResultsAgreesWithLines(t *testing.T) {
	files, err := filepath.Glob("testdata/good/submissions/*/*/*/*/" + ResultsFile)
	if err != nil || len(files) == 0 {
		t.Fatalf("no good results fixtures: %v", err)
	}
	var inputs []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(raw))
	}
	one := `{"instance_id":"a","resolved":false,"patch_applied":true,"f2p_passed":["t::x"],"f2p_failed":[],"p2p_passed":[],"p2p_failed":[],"files_changed":1,"tokens_in":12,"cost":0.5}`
	inputs = append(inputs,
		one+"\n",
		one,                   // no final newline
		"\n\n"+one+"\n\n",     // blank lines around
		one+"\r\n"+one+"\r\n", // CRLF
		"  "+one+"  \n",       // spaces around
		`{"instance_id":"a","tokens_in":null,"tokens_out":-3,"cost":1.5e-3,"files_changed":-1,"dataset":"d/v1","f2p_passed":["t::\u0078"]}`+"\n",
		`{"instance_id":"caf\u00e9 \"q\"","resolved":false,"patch_applied":false,"f2p_passed":null,"f2p_failed":[],"p2p_passed":[],"p2p_failed":[],"files_changed":0,"failure_modes":["x"]}`+"\n",
	)
	scanned := 0
	for i, in := range inputs {
		fast, ok := decodeResults([]byte(in), testInterner)
		if !ok {
			t.Errorf("input %d: the fast path declined a valid file:\n%.300s", i, in)
			continue
		}
		slow, ps := decodeResultLines("x.jsonl", []byte(in), nil)
		if len(ps) > 0 {
			t.Fatalf("input %d: line decoder: %v", i, ps)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("input %d: fast and line decoders disagree:\nfast %+v\nline %+v", i, fast, slow)
		}
		// The scanner reads plain files (no escape, ASCII) or declines.
		if got, ok := scanResults([]byte(in), testInterner); ok {
			scanned++
			if !reflect.DeepEqual(got, slow) {
				t.Errorf("input %d: scanner and line decoder disagree:\nscan %+v\nline %+v", i, got, slow)
			}
		} else if !strings.Contains(in, `\u`) && !strings.Contains(in, `\"`) {
			t.Errorf("input %d: the scanner declined a plain file:\n%.300s", i, in)
		}
	}
	if scanned < len(files) {
		t.Errorf("the scanner read %d of the %d inputs", scanned, len(inputs))
	}
}

// Anything unusual goes to the line decoder, which names the problem.
func TestDecodeResultsDeclinesUnusual(t *testing.T) {
	one := `{"instance_id":"a","resolved":false,"patch_applied":true,"f2p_passed":[],"f2p_failed":[],"p2p_passed":[],"p2p_failed":[],"files_changed":1}`
	for name, in := range map[string]string{
		"two values on a line": one + one + "\n",
		"value across lines":   "{\"instance_id\":\n\"a\"}\n",
		"unknown field":        `{"instance_id":"a","bogus":1}` + "\n",
		"field in other case":  `{"Instance_ID":"a"}` + "\n",
		"null instance id":     `{"instance_id":null}` + "\n",
		"fraction for an int":  `{"instance_id":"a","files_changed":1.5}` + "\n",
		"exponent for an int":  `{"instance_id":"a","files_changed":1e2}` + "\n",
		"string in a list":     `{"instance_id":"a","f2p_passed":[1]}` + "\n",
		"bool as string":       `{"instance_id":"a","resolved":"true"}` + "\n",
		"invalid UTF-8":        "{\"instance_id\":\"a\xff\"}\n",
		"syntax error":         one + "\n{\"instance_id\":}\n",
		"truncated":            one + "\n{\"instance_id\":\"b\"",
		"wrong type":           `{"instance_id":"a","files_changed":"one"}` + "\n",
		"not an object":        "[1]\n",
		"null line":            "null\n",
		// encoding/json would let the last of two keys win; a line must
		// not say two things.
		"duplicate key":         `{"instance_id":"a","instance_id":"b"}` + "\n",
		"duplicate list":        `{"instance_id":"a","f2p_passed":["t::x"],"f2p_passed":["t::y","t::x"]}` + "\n",
		"key in upper case too": `{"instance_id":"a","resolved":false,"RESOLVED":true}` + "\n",
		"escaped duplicate key": `{"instance_id":"a","resolve\u0064":true,"resolved":false}` + "\n",
	} {
		if _, ok := decodeResults([]byte(in), testInterner); ok {
			t.Errorf("%s: the fast path accepted %q", name, in)
		}
		if _, ok := scanResults([]byte(in), testInterner); ok {
			t.Errorf("%s: the scanner accepted %q", name, in)
		}
	}
}

// decodeInstance takes the encoding/json/v2 fast path for a plain instance
// and must give exactly what encoding/json and UnmarshalJSON give.
func TestDecodeInstanceAgreesWithUnmarshalJSON(t *testing.T) {
	files, err := filepath.Glob("testdata/good/datasets/*/*/" + InstancesFile)
	if err != nil || len(files) == 0 {
		t.Fatalf("no good instance fixtures: %v", err)
	}
	var lines []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(raw, []byte("\n")) {
			if l = bytes.TrimSpace(l); len(l) > 0 {
				lines = append(lines, string(l))
			}
		}
	}
	plain := `{"instance_id":"o__r-1","repo":"o/r","base_commit":"abc","level":2,"problem_statement":"Add \u00e9 \"x\"","patch":"p","test_patch":"tp",` +
		`"FAIL_TO_PASS":["t::a"],"PASS_TO_PASS":[],"image_name":"i","repo_settings":{"python":"3.12","env":[1,2]},"created_at":"2026-01-01",` +
		`"lines":3,"files":1,"functions":1,"f2p_test_points":4,"p2p_test_points":0,"top_objects":["m.f"]}`
	lines = append(lines,
		plain,
		strings.Replace(plain, `"repo_settings":{"python":"3.12","env":[1,2]},`, "", 1), // no settings
		strings.Replace(plain, `{"python":"3.12","env":[1,2]}`, "null", 1),              // null settings
		strings.Replace(plain, `["m.f"]`, "null", 1),                                    // null list
		strings.Replace(plain, `"level":2`, `"level":2,"custom":{"k":1}`, 1),            // unknown field: kept
		strings.Replace(plain, `["t::a"]`, `"[\"t::a\"]"`, 1),                           // SWE-bench string list
	)
	fast := 0
	for i, l := range lines {
		var want Instance
		if err := json.Unmarshal([]byte(l), &want); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		got := Instance{Line: 7}
		if err := decodeInstance([]byte(l), &got); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		want.Line = 7
		if !reflect.DeepEqual(got, want) {
			t.Errorf("line %d: decodeInstance and UnmarshalJSON disagree:\n got %+v\nwant %+v", i, got, want)
		}
		var f instanceFields
		if jsonv2.Unmarshal([]byte(l), &f, jsonv2.RejectUnknownMembers(true)) == nil {
			fast++
		}
	}
	if fast < 2 {
		t.Errorf("the fast path took %d of %d instances; want at least the plain ones", fast, len(lines))
	}
}

// A loaded instance's JSON is its line as published, unknown fields and
// formatting included; one built in code is marshalled.
func TestInstanceJSONIsThePublishedLine(t *testing.T) {
	raw := []byte("{\"instance_id\":\"a\",  \"custom\": {\"k\": 1}}\n\n  {\"instance_id\":\"b\"}  \n")
	var got []string
	eachLine(raw, func(line int, b []byte) {
		in := &Instance{Line: line, raw: b}
		if err := decodeInstance(b, in); err != nil {
			t.Fatal(err)
		}
		j, err := in.JSON()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s", in.Line, j))
	})
	want := []string{`1 {"instance_id":"a",  "custom": {"k": 1}}`, `3 {"instance_id":"b"}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	j, err := (&Instance{InstanceID: "c", Extra: map[string]json.RawMessage{"z": json.RawMessage(`1`)}}).JSON()
	if err != nil || !bytes.HasPrefix(j, []byte(`{"instance_id":"c"`)) || !bytes.HasSuffix(j, []byte(`,"z":1}`)) {
		t.Errorf("marshalled instance = %s (%v)", j, err)
	}
}

// testInterner knows one instance, test and dataset, as a dataset would.
var testInterner = interner{instance: knows("a"), test: knows("t::x"), dataset: knows("d/v1")}

func knows(s string) func([]byte) string {
	return func(b []byte) string {
		if string(b) == s {
			return s
		}
		return ""
	}
}

// readFile reuses its buffer across files of any size and never returns
// bytes of an earlier, longer file.
func TestReadFileReusesBuffer(t *testing.T) {
	dir := t.TempDir()
	var buf []byte
	for _, content := range []string{strings.Repeat("x", 5000), "short", "", strings.Repeat("y", 70000)} {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readFile(p, 1<<20, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Fatalf("read %d bytes, want %d", len(got), len(content))
		}
	}
	if cap(buf) < 70000 {
		t.Errorf("buffer not kept: cap %d", cap(buf))
	}
	if _, err := readFile(filepath.Join(dir, "missing"), 1<<20, &buf); err == nil {
		t.Error("reading a missing file: no error")
	}
}

// Lists and numbers share slabs: a result's list must stay its own when
// a caller appends to it, and each number keeps its value.
func TestDecodedListsDoNotShareElements(t *testing.T) {
	in := `{"instance_id":"a","p2p_passed":["t1","t2"],"tokens_in":1,"cost":0.5}` + "\n" +
		`{"instance_id":"b","p2p_passed":["t3"],"tokens_in":2,"cost":1.5}` + "\n"
	got, ok := decodeResults([]byte(in), testInterner)
	if !ok || len(got) != 2 {
		t.Fatalf("decodeResults: ok %v, %d results", ok, len(got))
	}
	_ = append(got[0].P2PPassed, "appended")
	if want := []string{"t3"}; !reflect.DeepEqual(got[1].P2PPassed, want) {
		t.Errorf("second result's p2p_passed = %q after appending to the first's, want %q", got[1].P2PPassed, want)
	}
	if *got[0].TokensIn != 1 || *got[1].TokensIn != 2 || *got[0].Cost != 0.5 || *got[1].Cost != 1.5 {
		t.Errorf("numbers: tokens_in %d, %d; cost %v, %v", *got[0].TokensIn, *got[1].TokensIn, *got[0].Cost, *got[1].Cost)
	}
}

// FuzzScanResults: whatever the scanner accepts, the line decoder reads
// alike and without a problem, and so does the jsontext fast path when it
// accepts it too; the scanner declines the rest.
//
//	go test ./bench -run '^$' -fuzz FuzzScanResults -fuzztime 60s
func FuzzScanResults(f *testing.F) {
	one := `{"instance_id":"a","resolved":false,"patch_applied":true,"f2p_passed":["t::x"],"f2p_failed":[],"p2p_passed":[],"p2p_failed":[],"files_changed":1,"tokens_in":12,"cost":0.5}`
	for _, seed := range []string{
		one + "\n",
		one + "\r\n\n" + one,
		`{ "instance_id" : "a" , "tokens_in" : null , "cost" : -1.5e-3 , "attempts_passed" : [ 1 , 0 ] , "flags" : [ "reads-git" ] }`,
		`{"instance_id":"a","files_changed":01}`,
		`{"instance_id":"a","cost":1e400}`,
		`{"instance_id":"a","tokens_in":9223372036854775808}`,
		`{"instance_id":"a","resolved":true,"resolved":false}`,
		`{"instance_id":"a"} {"instance_id":"b"}`,
		"{\"instance_id\":\"a\x7f\"}",
		`{"instance_id":"a","turns":-0,"duration":0.0,"measured":true,"audit":[],"apply_method":"git"}`,
		`{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		scanAgreesWithDataset(t, raw)
		got, ok := scanResults(raw, testInterner)
		if !ok {
			return
		}
		slow, ps := decodeResultLines("x.jsonl", raw, nil)
		if len(ps) > 0 {
			t.Fatalf("the scanner accepted what the line decoder refuses (%v):\n%q", ps, raw)
		}
		if (len(got) > 0 || len(slow) > 0) && !reflect.DeepEqual(got, slow) {
			t.Fatalf("scanner and line decoder disagree on %q:\nscan %+v\nline %+v", raw, got, slow)
		}
		if fast, ok := decodeResults(raw, testInterner); ok && !reflect.DeepEqual(got, fast) {
			t.Fatalf("scanner and jsontext path disagree on %q:\nscan %+v\nfast %+v", raw, got, fast)
		}
	})
}

// scanAgreesWithDataset: the scanner reads raw alike with a dataset's
// interner, which takes an instance's next test without scanning when
// the line holds it, and with testInterner, which never does: the same
// results (but for the instance each one is checked against) or the same
// refusal.
func scanAgreesWithDataset(t *testing.T, raw []byte) {
	t.Helper()
	want, wok := scanResults(raw, testInterner)
	got, gok := scanResults(raw, fuzzDataset.interner(fuzzDataset.Instances))
	for i := range got {
		got[i].inst = nil
	}
	if gok != wok || gok && !reflect.DeepEqual(got, want) {
		t.Fatalf("the scanner reads %q otherwise with a dataset's interner:\ndataset (%t) %+v\nplain (%t) %+v", raw, gok, got, wok, want)
	}
}

// fuzzDataset has the instances the seeds name: "a" with plain tests, "b"
// with one that a results file must escape, so it takes no short cut.
var fuzzDataset = func() *Dataset {
	d := &Dataset{byID: map[string]*Instance{}, testIDs: map[string]string{}}
	for k, in := range []*Instance{
		{InstanceID: "a", FailToPass: []string{"t::x", "t::y"}, PassToPass: []string{"t::z"}},
		{InstanceID: "b", FailToPass: []string{"t::\\n"}, PassToPass: []string{`t::q"r`}},
	} {
		in.pos = k
		in.plainTests = plainStrings(in.FailToPass) && plainStrings(in.PassToPass)
		d.Instances = append(d.Instances, in)
		d.byID[in.InstanceID] = in
	}
	return d
}()

// The seeds the dataset's interner takes short cuts on, and lines where a
// short cut must not be taken.
func TestScanAgreesWithDatasetInterner(t *testing.T) {
	if !fuzzDataset.Instances[0].plainTests || fuzzDataset.Instances[1].plainTests {
		t.Fatal("the instances' plainTests are not what the test needs")
	}
	for _, line := range []string{
		`{"instance_id":"a","f2p_passed":["t::x","t::y"],"p2p_failed":["t::z"]}`,
		`{"instance_id":"a","f2p_passed":[ "t::y" , "t::x" ],"p2p_passed":["t::z","t::z"]}`,
		`{"instance_id":"a","f2p_passed":["t::xy","t::"],"p2p_passed":["t::z\u0041"]}`,
		`{"instance_id":"a","f2p_passed":["t::x\"","t::y]}`,
		`{"instance_id":"a","f2p_passed":["t::x`,
		`{"instance_id":"b","f2p_passed":["t::\n"]}`,
		`{"instance_id":"b","p2p_passed":["t::q\"r"]}`,
		`{"instance_id":"b","f2p_passed":["t::\\n"]}`,
		`{"instance_id":"c","f2p_passed":["t::x","t::y"]}`,
		"{\"instance_id\":\"a\",\"f2p_passed\":[\"t::x\x7f\"]}",
	} {
		scanAgreesWithDataset(t, []byte(line+"\n"))
	}
}

// plain8, the scanner's eight-bytes-at-a-time test, must agree with the
// byte table: every byte value at every place of a word of plain bytes,
// and words of two odd bytes (a borrow from one byte must not hide
// another).
func TestPlain8AgreesWithTheByteTable(t *testing.T) {
	word := func(b [8]byte) uint64 {
		var x uint64
		for i := 7; i >= 0; i-- {
			x = x<<8 | uint64(b[i])
		}
		return x
	}
	want := func(b [8]byte) bool {
		for _, c := range b {
			if !strPlain[c] {
				return false
			}
		}
		return true
	}
	check := func(b [8]byte) {
		if got := plain8(word(b)); got != want(b) {
			t.Fatalf("plain8(%q) = %t, the table says %t", b[:], got, !got)
		}
	}
	base := [8]byte{'t', 'e', 's', 't', 's', '/', 'a', '_'}
	check(base)
	for pos := range 8 {
		for c := range 256 {
			b := base
			b[pos] = byte(c)
			check(b)
			for pos2 := range 8 {
				for _, c2 := range []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', '\\', 0x7e, 0x7f, 0x80, 0xff} {
					b2 := b
					b2[pos2] = c2
					check(b2)
				}
			}
		}
	}
}
