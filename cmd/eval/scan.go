package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/atomicfile"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/leakscan"
)

// LeakScanFile is where eval run writes the leak scan of the images it
// pulled, in the run folder: the report of each image, by reference.
const LeakScanFile = "leakscan.json"

// scanImages reads each distinct image of the instances (imgs, by
// evaluate.ImageKey) as the engine saves it, looking for the solutions of
// the instances graded in it, and returns the reports by image.
func scanImages(ctx context.Context, eng *container.Engine, ds *bench.Dataset, ins []*bench.Instance, imgs map[string]string, log io.Writer) (map[string]*leakscan.Report, error) {
	byImage := map[string][]leakscan.Needles{}
	for _, in := range ins {
		img := imgs[evaluate.ImageKey(ds, in)]
		byImage[img] = append(byImage[img], leakscan.NeedlesOf(ds, in))
	}
	out := map[string]*leakscan.Report{}
	for _, img := range slicesSorted(byImage) {
		fmt.Fprintf(log, "leak scan: reading %s (its layers, history and configuration) for %d instances' solutions\n", img, len(byImage[img]))
		rc, err := eng.SaveImage(ctx, img)
		if err != nil {
			return nil, err
		}
		rep, err := leakscan.ScanImage(ctx, rc, byImage[img])
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("leak scan of %s: %w", img, err)
		}
		rep.Image = img
		out[img] = rep
	}
	return out, nil
}

func slicesSorted[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// printLeaks writes a scan's findings, those that reach the starting
// point first, and returns how many reach it.
func printLeaks(w io.Writer, what string, rep *leakscan.Report) int {
	reach := rep.Reaching()
	fmt.Fprintf(w, "leak scan of %s: %d files read", what, rep.Files)
	if rep.Layers > 0 {
		fmt.Fprintf(w, " in %d layers", rep.Layers)
	}
	fmt.Fprintf(w, "; %d places hold some of a solution, %d of them in the starting point\n", len(rep.Findings), len(reach))
	for _, f := range rep.Findings {
		mark := "  "
		if f.Reaches {
			mark = "! "
		}
		where := f.Path
		if f.Layer > 0 {
			where += fmt.Sprintf(" (layer %d)", f.Layer)
		}
		sample := f.Sample
		if len(sample) > 60 {
			sample = sample[:60] + "…"
		}
		fmt.Fprintf(w, "  %s%s %s %s: %d lines, e.g. %q: %s\n", mark, f.Instance, f.Kind, where, f.Matches, sample, f.Why)
	}
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(w, "  not read (over %d MiB): %s\n", 64, strings.Join(rep.Skipped, ", "))
	}
	return len(reach)
}

// leakScanRun scans the images a run pulled (a dataset whose instances
// bring their own), writes the reports into the run folder and says what
// was found. A finding does not stop the run: it is the dataset's, and the
// report says where it is.
func leakScanRun(ctx context.Context, eng *container.Engine, ds *bench.Dataset, ins []*bench.Instance, imgs map[string]string, dir string, stderr io.Writer) error {
	reps, err := scanImages(ctx, eng, ds, ins, imgs, stderr)
	if err != nil {
		return err
	}
	reach := 0
	for _, img := range slicesSorted(reps) {
		reach += printLeaks(stderr, img, reps[img])
	}
	if reach > 0 {
		fmt.Fprintf(stderr, "leak scan: %d places in the starting points (marked !) hold some of a solution: a prediction or an agent could read them\n", reach)
	}
	return atomicfile.WriteJSON(filepath.Join(dir, LeakScanFile), reps)
}

// scanStartingPoints takes a container of each instance's image to its
// starting point, as grading does, and scans its file system.
func scanStartingPoints(ctx context.Context, eng *container.Engine, ds *bench.Dataset, ins []*bench.Instance, imgs map[string]string) (map[string]*leakscan.Report, error) {
	out := map[string]*leakscan.Report{}
	for _, in := range ins {
		rep, err := func() (*leakscan.Report, error) {
			box, err := eng.Start(ctx, container.Spec{Image: imgs[evaluate.ImageKey(ds, in)], Name: "featbench-scan", WorkDir: "/testbed",
				Labels: map[string]string{evaluate.LabelProject: "1", evaluate.LabelKind: "scan"}})
			if err != nil {
				return nil, err
			}
			defer box.Remove()
			if _, err := evaluate.StartingPoint(ctx, box, ds, in, io.Discard); err != nil {
				return nil, err
			}
			rc, err := box.Export(ctx)
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return leakscan.ScanFS(ctx, rc, []leakscan.Needles{leakscan.NeedlesOf(ds, in)})
		}()
		if err != nil {
			return nil, fmt.Errorf("the starting point of %s: %w", in.InstanceID, err)
		}
		out[in.InstanceID] = rep
	}
	return out, nil
}
