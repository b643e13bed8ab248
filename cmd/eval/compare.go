package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/featbench/featbench/internal/evaluate"
)

func cmdCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", "RUN-ID [--featurebench DIR] [flags]",
		"Compares, instance by instance, a run's grades with FeatureBench's harness's: DIR is the\n"+
			"folder its `fb eval` writes (runs/<time>/, holding eval_outputs/<instance>/attempt-<n>/report.json),\n"+
			"by default the run's own grades in FeatureBench's format (runs/RUN-ID/"+evaluate.FeatureBenchDir+").\n"+
			"Prints one line per instance and attempt, and exits 1 when the verdicts disagree anywhere.", stderr)
	var pf projectFlags
	pf.register(fs)
	fbDir := fs.String("featurebench", "", "FeatureBench's output `DIR`")
	rest, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErr("give the run id")
	}
	pr, err := pf.open(ctx, noData)
	if err != nil {
		return err
	}
	dir := filepath.Join(pr.runsDir(), rest[0])
	meta, err := evaluate.ReadMeta(dir)
	if err != nil {
		return err
	}
	theirs := *fbDir
	if theirs == "" {
		theirs = filepath.Join(dir, evaluate.FeatureBenchDir)
	}
	cs, err := evaluate.CompareFeatureBench(dir, theirs, meta)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tATTEMPT\tOURS\tFEATUREBENCH\tPASS RATE (OURS / FB)\t")
	disagree := 0
	verdict := func(known, resolved bool) string {
		switch {
		case !known:
			return "-"
		case resolved:
			return "resolved"
		}
		return "unresolved"
	}
	for _, c := range cs {
		ours, theirs, rate := verdict(c.Ours != nil, c.Ours != nil && c.Ours.Resolved), verdict(c.Theirs != nil, c.Theirs != nil && c.Theirs.Resolved), ""
		if c.Ours != nil && c.Theirs != nil {
			rate = strconv.FormatFloat(c.Ours.PassedRate, 'f', 4, 64) + " / " + strconv.FormatFloat(c.Theirs.PassRate, 'f', 4, 64)
		}
		mark := ""
		if !c.Agree() {
			mark, disagree = "  <- disagree", disagree+1
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", c.InstanceID, c.Attempt, ours, theirs, rate, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d of %d attempts agree\n", len(cs)-disagree, len(cs))
	if disagree > 0 {
		return exitError{code: 1, err: fmt.Errorf("the two graders disagree on %d attempts (or one of them did not grade them)", disagree)}
	}
	return nil
}
