package fbimport_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/fbimport"
)

var release = time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)

// TestConvertFixture converts the textkit fixture into a dataset version
// the data model loads: masked layout, the instances' own images (at the
// mirror given), FeatureBench's interpreter, the test settings read, the
// levels from the ids.
func TestConvertFixture(t *testing.T) {
	raw, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	files, err := fbimport.Convert(context.Background(), fixture, raw, fbimport.Options{
		Name: "fb", Version: "textkit", ReleaseDate: release, Registry: "127.0.0.1:5077"})
	if err != nil {
		t.Fatal(err)
	}
	ds, _, err := bench.CheckDatasetFiles(t.TempDir(), "fb/textkit", files)
	if err != nil {
		t.Fatal(err)
	}
	if ds.LayoutOrDefault() != bench.LayoutMasked || ds.ImagesOrDefault() != bench.ImagesInstance || len(ds.Instances) != 14 {
		t.Fatalf("layout %s, images %s, %d instances", ds.Layout, ds.Images, len(ds.Instances))
	}
	if r := ds.Repository("featbench/textkit"); r == nil || r.Environment == nil || r.Environment.Interpreter != fbimport.DefaultInterpreter || r.URL != "https://github.com/featbench/textkit" {
		t.Errorf("repository: %+v", r)
	}
	in := ds.Instances[0]
	if in.Level != 1 || in.ImageName != "127.0.0.1:5077/"+FixtureImage || len(in.FailToPass) != 1 {
		t.Errorf("instance: level %d, image %s, F2P %v", in.Level, in.ImageName, in.FailToPass)
	}
	ts, err := in.TestSettings()
	if err != nil || ts.Test != 10*time.Second || ts.Run != 600*time.Second {
		t.Errorf("settings %+v, %v", ts, err)
	}
	if s := ds.Split("full"); s == nil || len(s.Instances) != 14 {
		t.Errorf("split: %+v", s)
	}
	// A JSON array of the same instances gives the same files.
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	arr := "[\n" + strings.Join(lines, ",\n") + "\n]\n"
	again, err := fbimport.Convert(context.Background(), "x.json", []byte(arr), fbimport.Options{
		Name: "fb", Version: "textkit", ReleaseDate: release, Registry: "127.0.0.1:5077"})
	if err != nil || string(again[bench.InstancesFile]) != string(files[bench.InstancesFile]) {
		t.Errorf("as a JSON array: %v", err)
	}
}

// TestConvertErrors: what cannot be converted is refused naming the line
// and field.
func TestConvertErrors(t *testing.T) {
	ok := `{"instance_id": "o__r.a.lv1", "repo": "o/r", "image_name": "o/img:1", "problem_statement": "p", "patch": "", "test_patch": "", "FAIL_TO_PASS": ["tests/test_a.py"], "PASS_TO_PASS": []}`
	for _, c := range []struct {
		name, input string
		line        int
		field, msg  string
	}{
		{"not JSON", ok + "\n{oops\n", 2, "", "not an instance"},
		{"no level", strings.Replace(ok, ".lv1", ".x", 1), 1, "instance_id", "ends in neither .lv1 nor .lv2"},
		{"no image", strings.Replace(ok, `"image_name": "o/img:1", `, "", 1), 1, "image_name", "is required"},
		{"bad image", "\n\n" + strings.Replace(ok, "o/img:1", "O/Img", 1), 3, "image_name", "invalid reference format"},
		{"bad settings", strings.Replace(ok, `"PASS_TO_PASS": []`, `"PASS_TO_PASS": [], "repo_settings": "{\"test_cmd\": \"make test\"}"`, 1), 1, "repo_settings", `not "pytest …"`},
		{"bad array", "[" + ok + ", {]", 1, "", "not JSON"},
		{"no instances", "\n", 0, "", "holds no instances"},
	} {
		_, err := fbimport.Convert(context.Background(), "in.jsonl", []byte(c.input), fbimport.Options{Name: "fb", Version: "v", ReleaseDate: release})
		var e *fbimport.Error
		if !errors.As(err, &e) || e.Line != c.line || e.Field != c.field || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: %#v (%v)", c.name, e, err)
		}
	}
	if _, err := fbimport.Convert(context.Background(), "in.jsonl", []byte(ok), fbimport.Options{Name: "fb", Version: "v", ReleaseDate: release, Registry: "not a host"}); err == nil || !strings.Contains(err.Error(), "--registry") {
		t.Errorf("a bad registry: %v", err)
	}
	// What converts but the data model refuses (no problem statement) is
	// the loader's to say, with its file, line and field.
	files, err := fbimport.Convert(context.Background(), "in.jsonl", []byte(strings.Replace(ok, `"problem_statement": "p"`, `"problem_statement": ""`, 1)), fbimport.Options{Name: "fb", Version: "v", ReleaseDate: release})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := bench.CheckDatasetFiles(t.TempDir(), "fb/v", files); err == nil || !strings.Contains(err.Error(), filepath.Join("fb", "v", "instances.jsonl")+":1") || !strings.Contains(err.Error(), "problem_statement") {
		t.Errorf("the loader's check: %v", err)
	}
}
