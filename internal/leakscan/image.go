package leakscan

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"
)

// savedManifest is an entry of a saved image's manifest.json.
type savedManifest struct {
	Config string   `json:"Config"`
	Layers []string `json:"Layers"`
}

// imageConfig is what a scan reads of an image's configuration.
type imageConfig struct {
	Config struct {
		Env    []string          `json:"Env"`
		Labels map[string]string `json:"Labels"`
	} `json:"config"`
	History []struct {
		CreatedBy  string `json:"created_by"`
		EmptyLayer bool   `json:"empty_layer"`
	} `json:"history"`
}

// ScanImage reads an image as the engine saves it (the tar stream of
// `docker save` of one image) and reports where it holds the solutions of
// the instances whose needles are given, and whether each place reaches
// the starting point the harness makes from it (see the package's doc).
func ScanImage(ctx context.Context, saved io.Reader, needles []Needles) (*Report, error) {
	s, err := newScanner(needles)
	if err != nil {
		return nil, err
	}
	defer s.close()
	s.baseOf = imageBase
	var manifest []savedManifest
	configs := map[string][]byte{}
	paths := map[string][]string{}     // layer folder -> regular files it holds
	whiteouts := map[string][]string{} // layer folder -> paths it deletes (a folder ending in "/" when opaque)
	gitLayers := map[string][]string{} // repository -> layer folders holding its objects
	tr := tar.NewReader(saved)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the saved image: %w", err)
		}
		name := path.Clean(hdr.Name)
		switch {
		case name == "manifest.json":
			if err := json.NewDecoder(io.LimitReader(tr, 16<<20)).Decode(&manifest); err != nil {
				return nil, fmt.Errorf("the saved image's manifest.json: %w", err)
			}
		case strings.HasSuffix(name, ".json") && !strings.Contains(name, "/"):
			b, err := io.ReadAll(io.LimitReader(tr, 16<<20))
			if err != nil {
				return nil, err
			}
			configs[name] = b
		case path.Base(name) == "layer.tar":
			layer := name
			lr := tar.NewReader(tr)
			for {
				lh, err := lr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return nil, fmt.Errorf("reading layer %s: %w", layer, err)
				}
				p := "/" + strings.TrimPrefix(path.Clean("/"+lh.Name), "/")
				base := path.Base(p)
				switch {
				case base == ".wh..wh..opq":
					whiteouts[layer] = append(whiteouts[layer], path.Dir(p)+"/")
					continue
				case strings.HasPrefix(base, ".wh."):
					whiteouts[layer] = append(whiteouts[layer], path.Join(path.Dir(p), strings.TrimPrefix(base, ".wh.")))
					continue
				case lh.Typeflag != tar.TypeReg:
					continue
				}
				paths[layer] = append(paths[layer], p)
				if err := s.file(layer, p, lr, lh.Size); err != nil {
					return nil, fmt.Errorf("reading %s of layer %s: %w", p, layer, err)
				}
				if m := gitObject.FindStringSubmatch(p); m != nil {
					repo := strings.TrimSuffix(m[1], "/")
					if l := gitLayers[repo]; len(l) == 0 || l[len(l)-1] != layer {
						gitLayers[repo] = append(gitLayers[repo], layer)
					}
				}
			}
		}
	}
	if len(manifest) != 1 {
		return nil, fmt.Errorf("the saved image holds %d images; want 1", len(manifest))
	}
	order := map[string]int{}
	for i, l := range manifest[0].Layers {
		order[path.Clean(l)] = i + 1
	}
	var cfg imageConfig
	if raw := configs[path.Clean(manifest[0].Config)]; raw != nil {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, fmt.Errorf("the image's configuration: %w", err)
		}
	}
	// What a later layer deletes or replaces is not in a container.
	gone := func(p string, layer string) bool {
		at := order[layer]
		for l, ws := range whiteouts {
			if order[l] <= at {
				continue
			}
			for _, w := range ws {
				if p == w || strings.HasPrefix(p, strings.TrimSuffix(w, "/")+"/") {
					return true
				}
			}
		}
		for l, ps := range paths {
			if order[l] > at {
				if i := sort.SearchStrings(ps, p); i < len(ps) && ps[i] == p {
					return true
				}
			}
		}
		return false
	}
	for _, ps := range paths {
		sort.Strings(ps)
	}
	// Whether the image keeps the complete project in /root/my_repo (in
	// a layer no later one deletes): the harness restores /testbed from
	// it.
	myRepo := false
	for l, ps := range paths {
		for _, p := range ps {
			if strings.HasPrefix(p, "/root/my_repo/") && !gone(p, l) {
				myRepo = true
				break
			}
		}
	}
	gits, err := s.gitMatches(ctx)
	if err != nil {
		return nil, err
	}
	for i := range gits {
		ls := gitLayers[gits[i].path]
		gits[i].layer = ls[len(ls)-1]
	}
	hits := append(s.hits, gits...)
	// The configuration and the history: lines and literals alike.
	for _, e := range cfg.Config.Env {
		name, value, _ := strings.Cut(e, "=")
		hits = append(hits, s.textHit(InEnv, name, value))
	}
	for k, v := range cfg.Config.Labels {
		hits = append(hits, s.textHit(InLabel, k, v))
	}
	for i, h := range cfg.History {
		hits = append(hits, s.textHit(InHistory, fmt.Sprintf("step %d", i+1), h.CreatedBy))
	}
	classify := func(h hit, n Needles) (bool, string) {
		switch h.kind {
		case InEnv:
			return true, "the image's environment, which every container of it has"
		case InLabel:
			return false, "a label of the image: published with it, not in a container"
		case InHistory:
			return false, "the image's history (the command of a step): published with it, not in a container"
		}
		if gone(h.path, h.layer) {
			return false, fmt.Sprintf("layer %d only, deleted or replaced by a later layer: not in a container, but in the published image", order[h.layer])
		}
		return startingPoint(h, n, myRepo)
	}
	rep := &Report{Findings: s.findings(hits, classify), Skipped: s.skipped, Files: s.files, Layers: len(order)}
	for i := range rep.Findings {
		if f := &rep.Findings[i]; f.Kind == InFile || f.Kind == InPyc || f.Kind == InGit {
			for _, h := range hits {
				if h.path == f.Path && h.kind == f.Kind {
					f.Layer = order[h.layer]
				}
			}
		}
	}
	return rep, nil
}

// textHit is a hit of a configuration value or history command, when it
// holds any instance's lines or literals.
func (s *scanner) textHit(kind, name, value string) hit {
	h := hit{kind: kind, path: name, by: map[int]match{}}
	for i, n := range s.needles {
		m := append(lines([]byte(value), n.Lines), lines([]byte(value), n.Literals)...)
		if len(m) > 0 {
			h.by[i] = m
		}
	}
	return h
}

// startingPoint says whether a file (or repository) of the image reaches
// the starting point the harness makes of it for the instance n. When the
// image keeps a copy of the project in /root/my_repo (myRepo), the harness
// removes /testbed's names that do not start with a dot, copies the copy's
// in (as FeatureBench's harness does) and removes the copy; it masks the
// files the instance's patch changes, and seals the repository (its .git,
// compiled files and root's cache go). Everything else stays.
func startingPoint(h hit, n Needles, myRepo bool) (bool, string) {
	p := h.path
	under := func(dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	rel, where := "", ""
	switch {
	case under("/root/my_repo"):
		rel, where = strings.TrimPrefix(strings.TrimPrefix(p, "/root/my_repo"), "/"), "/root/my_repo"
		if rel == "" || strings.HasPrefix(rel, ".") {
			return false, "in the copy of the project the harness removes, and does not restore (a name starting with a dot)"
		}
	case under("/testbed"):
		rel, where = strings.TrimPrefix(strings.TrimPrefix(p, "/testbed"), "/"), "/testbed"
		if myRepo && rel != "" && !strings.HasPrefix(rel, ".") {
			return false, "in /testbed, which the harness replaces by /root/my_repo's copy"
		}
	case under("/root/.cache"):
		return false, "root's cache, which the harness removes"
	}
	if where != "" {
		switch {
		case rel == ".git" || strings.HasPrefix(rel, ".git/"):
			return false, where + "'s git repository, which the harness replaces by one commit of the starting point"
		case strings.HasSuffix(rel, ".pyc") || strings.HasSuffix(rel, ".pyo") || strings.Contains("/"+rel, "/__pycache__/"):
			return false, "a compiled file of the project, which the harness removes"
		case slices.Contains(n.Files, rel):
			return false, "a file of the project the instance's patch masks"
		case where == "/root/my_repo":
			return true, "restored into /testbed/" + rel + ", which the starting point keeps"
		}
	}
	if h.kind == InGit {
		return true, "a git repository the starting point keeps"
	}
	return true, "a file the starting point keeps"
}
