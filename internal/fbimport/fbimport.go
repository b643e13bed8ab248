// Package fbimport turns a file of FeatureBench's published task instances
// (its Hugging Face dataset's fields: instance_id, repo, base_commit,
// problem_statement, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS,
// image_name, repo_settings) into the files of a dataset version here,
// for `collect import`: the instances as they are, and a dataset.toml
// saying how FeatureBench lays them out (layout = "masked": patch is the
// masking diff) and that each instance's image is its environment (images
// = "instance").
//
// The file is JSON Lines, one instance a line, or one JSON array of them
// (what the datasets library's to_json writes either way).
package fbimport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/registry"
)

// DefaultInterpreter is the Python FeatureBench's images run the tests
// with: the conda environment "testbed".
const DefaultInterpreter = "/opt/miniconda3/envs/testbed/bin/python"

// Options are one import.
type Options struct {
	Name, Version string    // the dataset version to write
	Title         string    // default: "FeatureBench (imported)"
	Description   string    // default: says where it came from
	ReleaseDate   time.Time // required
	Split         string    // the split holding every instance; default "full"
	// Registry, when set, is the registry host (HOST[:PORT]) the images
	// are taken from instead of the one image_name names: a mirror.
	Registry string
	// Interpreter is the Python of the images; DefaultInterpreter when
	// empty.
	Interpreter string
	// Pin, when not nil, gives the digest ("sha256:…") an image reference
	// names now (container.Engine.RemoteDigest, with credentials): each
	// image_name is then written pinned, NAME:TAG@DIGEST.
	Pin func(ctx context.Context, ref string) (string, error)
}

// Error is a problem of the input file, at a line and field.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += fmt.Sprintf(":%d", e.Line)
	}
	if e.Field != "" {
		s += fmt.Sprintf(": field %q", e.Field)
	}
	return s + ": " + e.Msg
}

// record is one input instance: its JSON object and the line it starts on.
type record struct {
	raw  json.RawMessage
	line int
}

// records splits the input into instances: a JSON array, or JSON Lines.
func records(file string, data []byte) ([]record, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(data))
		if _, err := dec.Token(); err != nil {
			return nil, &Error{File: file, Line: 1, Msg: err.Error()}
		}
		var out []record
		for dec.More() {
			off := dec.InputOffset()
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, &Error{File: file, Line: lineAt(data, int(dec.InputOffset())), Msg: "not JSON: " + err.Error()}
			}
			out = append(out, record{raw: raw, line: lineAt(data, int(off)+countSpace(data[off:]))})
		}
		return out, nil
	}
	var out []record
	for i, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		out = append(out, record{raw: bytes.TrimSpace(l), line: i + 1})
	}
	return out, nil
}

func countSpace(b []byte) int {
	return len(b) - len(bytes.TrimLeft(b, " \t\r\n,"))
}

func lineAt(data []byte, off int) int {
	return bytes.Count(data[:min(off, len(data))], []byte("\n")) + 1
}

// Convert reads the instances file (named file, for messages) and returns
// the files of the dataset version: dataset.toml and instances.jsonl.
// The instances are checked by the data model's own rules afterwards
// (bench.CheckDatasetFiles, by the caller); Convert refuses what it
// cannot convert, naming the line and field.
func Convert(ctx context.Context, file string, data []byte, o Options) (map[string][]byte, error) {
	if o.ReleaseDate.IsZero() {
		return nil, errors.New("a release date is required")
	}
	recs, err := records(file, data)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, &Error{File: file, Msg: "holds no instances"}
	}
	pinned := map[string]string{}
	repos := map[string]bool{}
	var ins []*bench.Instance
	for _, rec := range recs {
		bad := func(field, format string, args ...any) error {
			return &Error{File: file, Line: rec.line, Field: field, Msg: fmt.Sprintf(format, args...)}
		}
		var in bench.Instance
		if err := json.Unmarshal(rec.raw, &in); err != nil {
			return nil, bad("", "not an instance: %v", err)
		}
		if in.InstanceID == "" {
			return nil, bad("instance_id", "is required")
		}
		if in.Level == 0 {
			switch {
			case strings.HasSuffix(in.InstanceID, ".lv1"):
				in.Level = 1
			case strings.HasSuffix(in.InstanceID, ".lv2"):
				in.Level = 2
			default:
				return nil, bad("instance_id", "%q ends in neither .lv1 nor .lv2 and the instance gives no level", in.InstanceID)
			}
		}
		if in.Repo == "" {
			return nil, bad("repo", "is required")
		}
		if in.ImageName == "" {
			return nil, bad("image_name", "is required: it is the instance's environment")
		}
		ref, err := registry.Parse(in.ImageName)
		if err != nil {
			return nil, bad("image_name", "%v", err)
		}
		if o.Registry != "" {
			if ref, err = ref.WithDomain(o.Registry); err != nil {
				return nil, fmt.Errorf("--registry: %w", err)
			}
		}
		in.ImageName = ref.String()
		if o.Pin != nil && !ref.Pinned() {
			p := pinned[in.ImageName]
			if p == "" {
				digest, err := o.Pin(ctx, ref.String())
				if err != nil {
					return nil, bad("image_name", "%v", err)
				}
				p = ref.String() + "@" + digest
				if _, err := registry.Parse(p); err != nil {
					return nil, bad("image_name", "pinned: %v", err)
				}
				pinned[in.ImageName] = p
			}
			in.ImageName = p
		}
		if _, err := in.TestSettings(); err != nil {
			return nil, bad("repo_settings", "%v", err)
		}
		repos[in.Repo] = true
		ins = append(ins, &in)
	}
	var lines bytes.Buffer
	ids := make([]string, 0, len(ins))
	for _, in := range ins {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", in.InstanceID, err)
		}
		lines.Write(b)
		lines.WriteByte('\n')
		ids = append(ids, in.InstanceID)
	}
	m := manifestOf(o, slices.Sorted(maps.Keys(repos)), ids, file)
	var mb bytes.Buffer
	mb.WriteString("# Written by `collect import` from FeatureBench's instances; import again to change it.\n")
	enc := toml.NewEncoder(&mb)
	enc.Indent = ""
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encoding the manifest: %w", err)
	}
	text := strings.Replace(mb.String(), "version = ", "release_date = "+o.ReleaseDate.Format(time.DateOnly)+"\nversion = ", 1)
	return map[string][]byte{bench.ManifestFile: []byte(text), bench.InstancesFile: lines.Bytes()}, nil
}

// manifest is dataset.toml as an import writes it.
type manifest struct {
	Name        string  `toml:"name"`
	Title       string  `toml:"title"`
	Version     string  `toml:"version"`
	Description string  `toml:"description"`
	Layout      string  `toml:"layout"`
	Level2      string  `toml:"level2"`
	Images      string  `toml:"images"`
	Repos       []repo  `toml:"repositories"`
	Splits      []split `toml:"splits"`
}

type repo struct {
	Name        string `toml:"name"`
	URL         string `toml:"url,omitempty"`
	Environment struct {
		Interpreter string `toml:"interpreter"`
	} `toml:"environment"`
}

type split struct {
	Name        string   `toml:"name"`
	Description string   `toml:"description"`
	Instances   []string `toml:"instances"`
}

func manifestOf(o Options, repos, ids []string, file string) manifest {
	m := manifest{Name: o.Name, Version: o.Version, Title: o.Title, Description: o.Description,
		Layout: bench.LayoutMasked, Level2: bench.Level2AgentCode, Images: bench.ImagesInstance}
	if m.Title == "" {
		m.Title = "FeatureBench (imported)"
	}
	if m.Description == "" {
		m.Description = fmt.Sprintf("FeatureBench's task instances, imported from %s by `collect import`: each instance is graded in its own image, from its registry.", pathBase(file))
	}
	interp := o.Interpreter
	if interp == "" {
		interp = DefaultInterpreter
	}
	for _, name := range repos {
		r := repo{Name: name}
		if strings.Count(name, "/") == 1 && bench.CheckURL("https://github.com/"+name) == nil {
			r.URL = "https://github.com/" + name
		}
		r.Environment.Interpreter = interp
		m.Repos = append(m.Repos, r)
	}
	sp := o.Split
	if sp == "" {
		sp = "full"
	}
	m.Splits = []split{{Name: sp, Description: "Every instance of the imported file.", Instances: ids}}
	return m
}

func pathBase(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
