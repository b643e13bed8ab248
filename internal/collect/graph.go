package collect

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/trace"
)

// StoredGraph is a test file's traced graph from a repository's work
// folder, with the roles the walk gave its nodes when it got that far.
type StoredGraph struct {
	Graph *trace.Graph
	Walk  *trace.WalkResult // nil when the file was not walked
	Kept  map[string]bool   // nodes its pass-to-pass files reached
}

// Style names a node's role, for trace.WriteDOT.
func (s *StoredGraph) Style(n *trace.Node) string {
	if s.Walk != nil {
		for _, id := range s.Walk.Tops {
			if id == n.ID {
				return trace.StyleTop
			}
		}
		for _, id := range s.Walk.Extracted {
			if id == n.ID {
				return trace.StyleExtracted
			}
		}
	}
	if s.Kept[n.ID] {
		return trace.StyleKept
	}
	if isTestPath(n.File) {
		return trace.StyleTest
	}
	return ""
}

// LoadGraph reads what the work folder holds for one test file of a
// repository: its trace and, if it was a candidate that got that far, its
// walk and pass-to-pass files.
func LoadGraph(root string, cfg config.Config, repo, file string) (*StoredGraph, error) {
	workDir := cfg.Collect.Work
	if !filepath.IsAbs(workDir) {
		workDir = filepath.Join(root, workDir)
	}
	w := work{dir: filepath.Join(workDir, fileKey(repo))}
	var t traceOut
	if err := readOutput(w.path(StageTrace, file), &t); err != nil {
		return nil, fmt.Errorf("no trace of %s in %s (run the trace stage first): %w", file, w.dir, err)
	}
	if !t.OK {
		return nil, fmt.Errorf("the traced run of %s failed: %s", file, t.Reason)
	}
	sg := &StoredGraph{Graph: t.Graph, Kept: map[string]bool{}}
	var wo walkOut
	if readOutput(w.path(StageWalk, file), &wo) == nil {
		sg.Walk = &wo.Result
	}
	var p p2pOut
	if readOutput(w.path(StageP2P, file), &p) == nil {
		for _, f := range p.Files {
			var pt traceOut
			if readOutput(w.path(StageTrace, f), &pt) == nil && pt.OK {
				for id := range pt.Graph.Reached() {
					sg.Kept[id] = true
				}
			}
		}
	}
	return sg, nil
}

// readOutput reads a stored output whatever its digest.
func readOutput(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return json.Unmarshal(r.Output, v)
}
