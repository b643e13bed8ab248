// Command eval grades agents' predictions on a dataset's instances in Docker
// containers and turns a run into a leaderboard submission.
//
//	eval infer --dataset example/v3 --split lite --agent NAME --run-id ID
//	eval run --dataset example/v2 --split full --predictions FILE --run-id ID
//	eval submit RUN --slug SLUG --name NAME --scaffold S --model M
//	eval validate DIR [--rerun]
//	eval images [--build --dataset NAME/VERSION | --bases]
//	eval clean
//	eval compare RUN [--featurebench DIR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: eval <command> [flags]

Grades agents' predictions on a dataset's instances in Docker containers,
and turns a run into a leaderboard submission under data/submissions/.

Commands:
  infer     run an agent of featbench.toml on a split, metered, into predictions for run
  run       evaluate predictions (or --gold, --empty) on a split
  submit    make the submission folders of a finished run
  validate  re-grade a submission folder from its logs (--rerun: in containers)
  images    list the images, build a dataset's (--build) or the Python base images (--bases)
  clean     remove the containers and images eval made
  compare   compare a run's grades with FeatureBench's harness's, instance by instance

Run "eval <command> --help" for a command's flags.
`

// exitError carries an exit code: 1 for a failure, 2 for a usage error.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	commands := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"infer":    cmdInfer,
		"run":      cmdRun,
		"submit":   cmdSubmit,
		"validate": cmdValidate,
		"images":   cmdImages,
		"clean":    cmdClean,
		"compare":  cmdCompare,
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "eval: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	err := cmd(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.err != nil && !errors.Is(ee.err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "eval %s: %v\n", args[0], ee.err)
		}
		return ee.code
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "eval %s: interrupted; what finished is kept, and running the same command again resumes\n", args[0])
		return 130
	}
	fmt.Fprintf(stderr, "eval %s: %v\n", args[0], err)
	return 1
}

// usageErr is a usage error: exit code 2.
func usageErr(format string, args ...any) error {
	return exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// newFlags is a command's flag set, with its usage line.
func newFlags(name, synopsis, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("eval "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: eval %s %s\n\n%s\n\n", name, synopsis, about)
		fs.PrintDefaults()
	}
	return fs
}

// given is the names of the flags the command line set.
func given(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// checkWorkers refuses a --workers the command line gave outside the
// bounds featbench.toml's eval.workers has.
func checkWorkers(fs *flag.FlagSet, n int) error {
	if given(fs)["workers"] && (n < 1 || n > 256) {
		return usageErr("--workers %d: want 1 to 256, as eval.workers", n)
	}
	return nil
}

// parse parses a command's flags and returns its other arguments, which
// may come first (eval submit RUN --slug ...) or after the flags; --help
// prints its usage to stdout and ends the command with status 0.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return nil, flag.ErrHelp
		}
	}
	var lead []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		lead, args = append(lead, args[0]), args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return nil, exitError{code: 2, err: nil}
	}
	return append(lead, fs.Args()...), nil
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return fmt.Sprint(*m) }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }
