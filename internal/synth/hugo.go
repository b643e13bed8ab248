package synth

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/featbench/featbench/bench"
)

// WriteHugo writes a Hugo project into dir holding what the site build
// renders at most cost, for comparing the two (scripts/bench-hugo.sh): a
// page per instance of the project at root with its problem statement's
// markdown and a table of every system's result on it. Code fences are
// left to Hugo's defaults (highlighted by its built-in chroma, with
// inline styles). The layouts are the least a page needs.
func WriteHugo(root, dir string) error {
	data, err := bench.Load(context.Background(), filepath.Join(root, "data"))
	if err != nil {
		return fmt.Errorf("loading the project at %s: %w", root, err)
	}
	files := map[string]string{
		"hugo.toml": "baseURL = \"https://synthetic.example/\"\ntitle = \"FeatBench (synthetic)\"\n" +
			"disableKinds = [\"taxonomy\", \"term\"]\n",
		"layouts/_default/baseof.html": "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{{ .Title }}</title></head>\n" +
			"<body><main>{{ block \"main\" . }}{{ end }}</main></body></html>\n",
		"layouts/_default/single.html": "{{ define \"main\" }}<h1>{{ .Title }}</h1>\n{{ .Content }}{{ end }}\n",
		"layouts/_default/list.html":   "{{ define \"main\" }}<h1>{{ .Title }}</h1>\n<ul>{{ range .Pages }}<li><a href=\"{{ .RelPermalink }}\">{{ .Title }}</a></li>{{ end }}</ul>{{ end }}\n",
		"content/instances/_index.md":  "+++\ntitle = \"Instances\"\n+++\n",
	}
	for name, text := range files {
		if err := writeFile(filepath.Join(dir, name), text); err != nil {
			return err
		}
	}
	for _, ds := range data.Datasets {
		if !ds.HasInstances() {
			continue
		}
		subs := data.SubmissionsFor(ds, SplitFull)
		for _, in := range ds.Instances {
			var b strings.Builder
			fmt.Fprintf(&b, "+++\ntitle = %s\n+++\n\n", strconv.Quote(in.InstanceID))
			b.WriteString(in.ProblemStatement)
			b.WriteString("\n\n## Results\n\n| System | Resolved | Patch applied | Fail-to-pass passed | Failure modes |\n| --- | --- | --- | --- | --- |\n")
			for _, s := range subs {
				r := s.ResultOf(in)
				if r == nil {
					fmt.Fprintf(&b, "| %s | no prediction | | | |\n", s.Name)
					continue
				}
				fmt.Fprintf(&b, "| %s | %t | %t | %d of %d | %s |\n", s.Name, r.Resolved, r.PatchApplied,
					len(r.F2PPassed), len(in.FailToPass), strings.Join(r.FailureModes, ", "))
			}
			if err := writeFile(filepath.Join(dir, "content", "instances", in.InstanceID+".md"), b.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeFile(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	_, _ = w.WriteString(text)
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
