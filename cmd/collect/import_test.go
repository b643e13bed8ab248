package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/testenv"
)

// TestImport runs `collect import` on the example repository's
// FeatureBench-format instances, whose image (in FeatureBench's layout) is
// in the local registry: the dataset version it writes loads, with every
// image pinned by the digest the registry holds; a second import into the
// same version, an image the registry does not have and a line that is
// not an instance are errors that leave nothing written.
func TestImport(t *testing.T) {
	reg := testenv.Registry(t)
	t.Setenv("DOCKER_HOST", testenv.DockerHost(t))
	eng, base := imagestest.Base(t)
	pinned := imagestest.FeatureBenchImage(t, eng, base, "../../examples/textkit", reg.Open+"/featbench/featurebench-specs_textkit-instance_v4", "")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, config.FileName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fixture, _ := filepath.Abs("../../examples/featurebench/textkit.jsonl")
	imp := func(args ...string) (string, string, int) {
		return runCollect(append([]string{"import", "--root", root, "--featurebench", fixture, "--release-date", "2026-11-27"}, args...)...)
	}
	out, errOut, code := imp("--dataset", "fb/textkit", "--registry", reg.Open)
	if code != 0 {
		t.Fatalf("collect import: exit %d\n%s%s", code, out, errOut)
	}
	data, err := bench.Load(context.Background(), filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Dataset("fb/textkit")
	if ds == nil || len(ds.Instances) != 14 || len(data.Unlocked) != 0 {
		t.Fatalf("the imported dataset: %+v (unlocked %v)", ds, data.Unlocked)
	}
	digest := pinned[strings.Index(pinned, "@"):]
	for _, in := range ds.Instances {
		if in.ImageName != reg.Open+"/featbench/featurebench-specs_textkit-instance_v4"+digest {
			t.Errorf("%s: image %s, want it pinned to %s", in.InstanceID, in.ImageName, digest)
		}
	}
	if _, errOut, code := imp("--dataset", "fb/textkit", "--registry", reg.Open); code != 1 || !strings.Contains(errOut, "never overwritten") {
		t.Errorf("a second import into fb/textkit: exit %d\n%s", code, errOut)
	}
	// A registry without the image: nothing is written.
	if _, errOut, code := imp("--dataset", "fb/other", "--registry", reg.Auth); code != 1 || !strings.Contains(errOut, `textkit.jsonl:1: field "image_name"`) || !strings.Contains(errOut, "refused access") {
		t.Errorf("an image the registry refuses: exit %d\n%s", code, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	raw, _ := os.ReadFile(fixture)
	os.WriteFile(bad, append(raw, []byte("{\"instance_id\": \"x.lv1\", \"repo\": 7}\n")...), 0o644)
	if _, errOut, code := runCollect("import", "--root", root, "--featurebench", bad, "--dataset", "fb/bad", "--pin=false"); code != 1 || !strings.Contains(errOut, "bad.jsonl:15") {
		t.Errorf("a bad line: exit %d\n%s", code, errOut)
	}
	for _, v := range []string{"other", "bad"} {
		if _, err := os.Stat(filepath.Join(root, "data", "datasets", "fb", v)); err == nil {
			t.Errorf("fb/%s was written", v)
		}
	}
}
