package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/submission"
)

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", "DIR [--rerun [--seed N]] [flags]",
		"Checks a submission folder (DIR, under data/submissions/) against its logs and its dataset: every file of\n"+
			"logs.tar.gz must have the hash the run's manifest records, every prediction.diff in it must be the\n"+
			"model_patch of predictions.jsonl, and every test file's raw output is parsed and graded again with the\n"+
			"dataset's level, flow and tests; every field of every line of results.jsonl must agree. --rerun also\n"+
			"evaluates a random sample of its predictions again in containers (eval.rerun_sample of them; a ranked\n"+
			"row of a dataset of at most eval.rerun_whole_max instances, all of them) and compares. The sample's\n"+
			"seed is drawn at random and printed (--seed repeats a sample). A submission without logs is accepted\n"+
			"only as figures reported, not recomputed.", stderr)
	var pf projectFlags
	pf.register(fs)
	rerun := fs.Bool("rerun", false, "evaluate a sample of the predictions again in containers and compare with results.jsonl")
	seedFlag := fs.String("seed", "", "the sample's `SEED`, an unsigned integer, to draw a printed sample again (default: drawn at random)")
	rest, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErr("give the submission folder: eval validate data/submissions/<name>/<version>/<split>/<folder>")
	}
	var seed uint64
	if *seedFlag != "" {
		if seed, err = strconv.ParseUint(*seedFlag, 10, 64); err != nil {
			return usageErr("--seed %q: want an unsigned integer", *seedFlag)
		}
	}
	// The datasets and this folder only: another submission's problem is
	// not this one's (build --check looks at all of data/).
	pr, err := pf.open(ctx, noData)
	if err != nil {
		return err
	}
	var sub *bench.Submission
	if pr.data, sub, err = bench.LoadSubmission(ctx, pr.dataDir(), rest[0]); err != nil {
		return err
	}
	var opts submission.Options
	if *rerun {
		if *seedFlag == "" {
			// Never a function of anything the submitter chose (the
			// folder's name, the files): a forger would know the sample.
			if seed, err = submission.RandomSeed(); err != nil {
				return err
			}
		}
		opts.Rerun = &submission.Rerun{RunsDir: pr.runsDir(), Sample: pr.cfg.Eval.RerunSample, WholeMax: pr.cfg.Eval.RerunWholeMax, Seed: seed,
			Evaluate: func(ctx context.Context, cfg evaluate.Config) (*evaluate.RunReport, error) {
				ins := make([]*bench.Instance, 0, len(cfg.Meta.Instances))
				for _, id := range cfg.Meta.Instances {
					ins = append(ins, cfg.Dataset.Instance(id))
				}
				fmt.Fprintf(stderr, "re-running %d instances of %s (seed %d; --seed %d draws this sample again): %s\n", len(ins), sub.ID(), seed, seed, strings.Join(cfg.Meta.Instances, ", "))
				lim, err := pr.limits(0)
				if err != nil {
					return nil, err
				}
				eng, err := pr.engine(ctx)
				if err != nil {
					return nil, err
				}
				defer eng.Close()
				imgs, err := pr.buildImages(ctx, eng, cfg.Dataset, ins, stderr)
				if err != nil {
					return nil, err
				}
				b, err := executor.Open(ctx, pr.cfg.Eval, eng, stderr)
				if err != nil {
					return nil, err
				}
				defer b.Close()
				cfg.Images, cfg.Engine, cfg.Limits, cfg.Workers, cfg.Progress, cfg.Log = imgs, b.Executor, lim, pr.cfg.Eval.Workers, newProgress(stderr, b.Status), stderr
				return evaluate.Run(ctx, cfg)
			}}
	}
	rep, err := submission.Validate(ctx, sub, opts)
	if err != nil {
		return err
	}
	if rep.Reported {
		fmt.Fprintf(stdout, "%s: reported figures, not recomputed: nothing to re-grade\n", sub.ID())
		return nil
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%s: %d problems:\n  %s", sub.ID(), len(rep.Problems), strings.Join(rep.Problems, "\n  "))
	}
	again := ""
	if rep.Rerun != nil {
		again = fmt.Sprintf(", and %d of them with a new evaluation (seed %d, in %s)", len(rep.Rerun.Instances), rep.Rerun.Seed, rep.Rerun.Dir)
		if rep.Rerun.Whole {
			again = fmt.Sprintf(", and all %d with a new evaluation (a ranked row of a dataset of at most eval.rerun_whole_max instances, in %s)", len(rep.Rerun.Instances), rep.Rerun.Dir)
		}
	}
	fmt.Fprintf(stdout, "%s: %d results agree with the logs%s\n", sub.ID(), rep.Checked, again)
	return nil
}
