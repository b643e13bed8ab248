package site

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/templates"
)

// A view's key changes with any value in it, however deep, and with the
// program's key and the extra texts; a view holding a function has none.
func TestViewKey(t *testing.T) {
	view := func() *templates.InstancePage {
		return &templates.InstancePage{
			Page: templates.Page{Site: &templates.Site{Title: "T", Base: "/"}, Nav: []templates.Link{{Title: "a", URL: "/a/"}}},
			ID:   "x", Level: 1, FailToPass: []string{"t"},
			Systems: []templates.InstanceSystem{{Name: "s", Resolved: true}},
		}
	}
	base, err := viewKey("prog", view(), []byte("statement"))
	if err != nil || base == 0 {
		t.Fatalf("viewKey: %d, %v", base, err)
	}
	if again, _ := viewKey("prog", view(), []byte("statement")); again != base {
		t.Error("the same view has two keys")
	}
	for name, change := range map[string]func(*templates.InstancePage){
		"site title":   func(p *templates.InstancePage) { p.Site.Title = "U" },
		"nav link":     func(p *templates.InstancePage) { p.Nav[0].URL = "/b/" },
		"level":        func(p *templates.InstancePage) { p.Level = 2 },
		"nil to empty": func(p *templates.InstancePage) { p.PassToPass = []string{} },
		"list item":    func(p *templates.InstancePage) { p.FailToPass[0] = "u" },
		"moved text":   func(p *templates.InstancePage) { p.ID, p.Repo = "", "x" },
		"deep bool":    func(p *templates.InstancePage) { p.Systems[0].Resolved = false },
		"more systems": func(p *templates.InstancePage) { p.Systems = append(p.Systems, templates.InstanceSystem{}) },
		// Past the hasher's buffer: long texts, and many short ones.
		"long text": func(p *templates.InstancePage) { p.Statement = strings.Repeat("x", 40<<10) },
		"many systems": func(p *templates.InstancePage) {
			for i := range 3000 {
				p.Systems = append(p.Systems, templates.InstanceSystem{Name: strconv.Itoa(i)})
			}
		},
	} {
		p := view()
		change(p)
		if k, err := viewKey("prog", p, []byte("statement")); err != nil || k == base {
			t.Errorf("%s: the key did not change (%v)", name, err)
		}
	}
	if k, _ := viewKey("prog2", view(), []byte("statement")); k == base {
		t.Error("the program's key does not change the key")
	}
	if k, _ := viewKey("prog", view(), []byte("statemen"), []byte("t")); k == base {
		t.Error("texts cut elsewhere give the same key")
	}
	// Views that differ only past the hasher's buffer.
	long := func(last string) *templates.InstancePage {
		p := view()
		p.Statement = strings.Repeat("x", 40<<10) + last
		for i := range 3000 {
			p.Systems = append(p.Systems, templates.InstanceSystem{Name: strconv.Itoa(i)})
		}
		p.Systems[len(p.Systems)-1].Name += last
		return p
	}
	a, _ := viewKey("prog", long("a"), []byte(strings.Repeat("t", 20<<10)))
	if b, _ := viewKey("prog", long("a"), []byte(strings.Repeat("t", 20<<10))); a != b {
		t.Error("the same long view has two keys")
	}
	if b, _ := viewKey("prog", long("b"), []byte(strings.Repeat("t", 20<<10))); a == b {
		t.Error("long views that differ at their end have the same key")
	}
	if b, _ := viewKey("prog", long("a"), []byte(strings.Repeat("t", 20<<10)+"u")); a == b {
		t.Error("long texts that differ at their end give the same key")
	}
	c := templates.Chart{Options: func() {}}
	if _, err := viewKey("prog", &c); err == nil {
		t.Error("a view holding a function has a key")
	}
}

// The program's key changes with the program's bytes (a new template is
// a new program), the configuration, the options and the date shown, and
// not with where the same program lies (go run builds it anew each time).
func TestProgramKey(t *testing.T) {
	dir := t.TempDir()
	exe := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	lib := &chartLib{version: "5.6.0"}
	opts := Options{ConfigBytes: []byte("[site]\ntitle = \"A\"\n"), Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	opts.Config.Title = "A"
	v1 := exe("v1", "program, version 1")
	base := programKey(opts, lib, v1)
	if programKey(opts, lib, exe("v1-again", "program, version 1")) != base {
		t.Error("the same program built again has another key")
	}
	if programKey(opts, lib, exe("v2", "program, version 2")) == base {
		t.Error("another program has the same key")
	}
	if k1, k2 := programKey(opts, lib, ""), programKey(opts, lib, ""); k1 == base || k1 == k2 {
		t.Error("without a program, the key is one an earlier build may have had")
	}
	if k1, k2 := programKey(opts, lib, filepath.Join(dir, "missing")), programKey(opts, lib, filepath.Join(dir, "missing")); k1 == k2 {
		t.Error("with a program that cannot be read, the key is one an earlier build may have had")
	}
	if programKey(opts, &chartLib{version: "5.6.0", file: "elsewhere/echarts.min.js"}, v1) != base {
		t.Error("the same chart library at another path gives another key")
	}
	for name, change := range map[string]func(*Options, **chartLib){
		"config file": func(o *Options, _ **chartLib) { o.ConfigBytes = []byte("[site]\ntitle = \"B\"\n") },
		"options":     func(o *Options, _ **chartLib) { o.Config.Title = "B" },
		"date":        func(o *Options, _ **chartLib) { o.Now = o.Now.AddDate(0, 0, 1) },
		"charts":      func(_ *Options, l **chartLib) { *l = &chartLib{version: "5.6.1"} },
		"chart bytes": func(_ *Options, l **chartLib) { *l = &chartLib{version: "5.6.0", data: []byte("x")} },
	} {
		o, l := opts, lib
		change(&o, &l)
		if programKey(o, l, v1) == base {
			t.Errorf("%s: the program's key did not change", name)
		}
	}
}

// TestViewKeyRowFields: the rows hashed field by field (viewHasher.rows)
// change the key with every field, nested ones included: a field added
// to a row and left out of rows fails here.
func TestViewKeyRowFields(t *testing.T) {
	page := &templates.InstancePage{Systems: []templates.InstanceSystem{{}}}
	table := &templates.OutcomeTable{Rows: []templates.Outcome{{}}}
	for _, c := range []struct {
		rows any
		row  reflect.Value
	}{
		{page, reflect.ValueOf(page.Systems)},
		{table, reflect.ValueOf(table.Rows)},
	} {
		rows, row := c.rows, c.row
		el := row.Index(0)
		for _, path := range fieldPaths(el.Type(), nil) {
			before := reflect.New(el.Type()).Elem()
			before.Set(el)
			// The slices on the way hold one zero element before the key
			// is taken: only the field itself changes after.
			setPath(el, path, false)
			base, err := viewKey("prog", rows)
			if err != nil {
				t.Fatal(err)
			}
			setPath(el, path, true)
			if k, err := viewKey("prog", rows); err != nil || k == base {
				t.Errorf("%s: setting %v does not change the key (%v)", el.Type(), path, err)
			}
			el.Set(before)
		}
	}
}

// fieldPaths are the paths to every field of a struct type, through
// slices of structs (element 0).
func fieldPaths(typ reflect.Type, prefix []int) [][]int {
	var out [][]int
	for i := range typ.NumField() {
		p := append(append([]int(nil), prefix...), i)
		f := typ.Field(i).Type
		if f.Kind() == reflect.Slice && f.Elem().Kind() == reflect.Struct {
			out = append(out, p) // the slice itself: one element
			for _, q := range fieldPaths(f.Elem(), nil) {
				out = append(out, append(append(append([]int(nil), p...), -1), q...))
			}
			continue
		}
		out = append(out, p)
	}
	return out
}

// setPath gives the field at path a value other than its zero value when
// set is true (-1 steps into element 0 of a slice, made if need be); with
// set false it only makes the slices on the way.
func setPath(v reflect.Value, path []int, set bool) {
	for i, step := range path {
		if step == -1 {
			if v.Len() == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			v = v.Index(0)
			continue
		}
		v = v.Field(step)
		if i < len(path)-1 || !set {
			continue
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int:
			v.SetInt(7)
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		default:
			panic("setPath: a field of kind " + v.Kind().String())
		}
	}
}
