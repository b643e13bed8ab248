package evaluate_test

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
)

// leakScan prints, from inside a container, where the lines given on
// standard input occur: "NEEDLES n" (after leaving out lines the starting
// point's own files, the standard library or Debian's Python packages
// hold, which prove nothing: "raise ValueError(...)" is everywhere), one "FILE path" per file
// anywhere in the container's filesystem holding one, and "GITOBJ repo n"
// for the objects of each repository, decompressed.
const leakScan = `cat > /dev/shm/n
grep -rhoF -f /dev/shm/n /testbed /usr/lib --exclude-dir=.git -s | sort -u > /dev/shm/base
grep -vxF -f /dev/shm/base /dev/shm/n > /dev/shm/needles
[ -s /dev/shm/base ] || cp /dev/shm/n /dev/shm/needles
echo "NEEDLES $(grep -c . /dev/shm/needles)"
grep -rlF -f /dev/shm/needles / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev -s | sed 's/^/FILE /'
for r in /testbed /agent; do
	[ -d "$r/.git" ] || continue
	echo "GITOBJ $r $(git -C "$r" cat-file --batch-all-objects --batch | grep -cF -f /dev/shm/needles)"
	echo "COMMITS $r $(git -C "$r" rev-list --all --reflog | wc -l) $(git -C "$r" stash list | wc -l) $(git -C "$r" tag | wc -l)"
done
exit 0
`

// TestNothingOfTheSolutionInTheContainer: in the container every instance
// of the example is graded in, once the prediction (here empty) and the
// tests are in place, no file anywhere, and no git object, holds a line of
// the feature (level 1: that the gold patch adds; level 2, whose gold patch
// is the whole package vendored: that the mask removes); the repository has
// one commit and no reflog, stash or tag beyond it.
func TestNothingOfTheSolutionInTheContainer(t *testing.T) {
	ds := example(t)
	eng, img := envImage(t)
	lim := testLimits
	scanned := 0
	for _, in := range ds.SplitInstances("full") {
		t.Run(in.InstanceID, func(t *testing.T) {
			feature, sign := in.Patch, "+"
			if in.Level == 2 {
				if in.MaskPatch == "" {
					t.Fatal("a level 2 instance without a mask_patch: graded beside the complete package")
				}
				feature, sign = in.MaskPatch, "-"
			}
			var needles []string
			for _, l := range strings.Split(feature, "\n") {
				if strings.HasPrefix(l, sign) && !strings.HasPrefix(l, sign+sign+sign) {
					if s := strings.TrimSpace(l[1:]); len(s) >= 20 {
						needles = append(needles, s)
					}
				}
			}
			if len(needles) == 0 {
				t.Skip("the gold patch adds no line long enough to look for")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			box, err := evaluate.Prepared(ctx, executor.Local(eng), evaluate.Task{Dataset: ds, Instance: in, Attempt: 1, Image: img,
				Labels: map[string]string{evaluate.LabelProject: "1", evaluate.LabelKind: "test"}}, lim)
			if err != nil {
				t.Fatal(err)
			}
			defer box.Remove()
			res, err := box.Exec(ctx, []string{"sh", "-c", leakScan}, container.ExecOptions{
				Timeout: 3 * time.Minute, Stdin: strings.NewReader(strings.Join(needles, "\n") + "\n")})
			if err != nil {
				t.Fatal(err)
			}
			out := string(res.Stdout)
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				f := strings.Fields(line)
				switch {
				case len(f) == 0:
				case f[0] == "NEEDLES":
					if n, _ := strconv.Atoi(f[1]); n == 0 {
						t.Errorf("every line of the feature is in the starting point too: nothing to look for")
					}
					scanned++
				case f[0] == "FILE":
					t.Errorf("%s holds a line of the feature", f[1])
				case f[0] == "GITOBJ" && f[2] != "0":
					t.Errorf("%s's git objects hold %s lines of the feature", f[1], f[2])
				case f[0] == "COMMITS" && (f[2] != "1" || f[3] != "0" || f[4] != "0"):
					t.Errorf("%s: %s commits (with the reflog's), %s stashes, %s tags; want 1, 0, 0", f[1], f[2], f[3], f[4])
				}
			}
			if !strings.Contains(out, "NEEDLES") {
				t.Errorf("the scan did not run: %s %s", out, res.Stderr)
			}
		})
	}
	if scanned == 0 {
		t.Error("no instance was scanned")
	}
}

// TestNothingOfTheSolutionAtTheAgentsStartingPoint: the starting point
// eval infer gives an agent (StartingPoint) holds, on every instance of
// the example's lite split, no line of the feature anywhere in the
// container or its git objects, nothing the harness brought (/fb), and
// level 1: none of the instance's fail-to-pass test files; level 2: the
// repository (with the tests that grade) closed to any user but root.
// The agent's folder is the repository (level 1) or an empty folder
// (level 2).
func TestNothingOfTheSolutionAtTheAgentsStartingPoint(t *testing.T) {
	ds := example(t)
	eng, img := envImage(t)
	for _, in := range ds.SplitInstances("lite") {
		t.Run(in.InstanceID, func(t *testing.T) {
			feature, sign := in.Patch, "+"
			if in.Level == 2 {
				feature, sign = in.MaskPatch, "-"
			}
			var needles []string
			for _, l := range strings.Split(feature, "\n") {
				if strings.HasPrefix(l, sign) && !strings.HasPrefix(l, sign+sign+sign) {
					if s := strings.TrimSpace(l[1:]); len(s) >= 20 {
						needles = append(needles, s)
					}
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			box, err := eng.Start(ctx, container.Spec{Image: img, Name: "featbench-test",
				Labels: map[string]string{evaluate.LabelProject: "1", evaluate.LabelKind: "test"}})
			if err != nil {
				t.Fatal(err)
			}
			defer box.Remove()
			work, err := evaluate.StartingPoint(ctx, box, ds, in, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[int]string{1: "/testbed", 2: "/agent"}[in.Level]; work != want {
				t.Errorf("the agent works in %s; want %s", work, want)
			}
			check := "test ! -e /fb || echo 'FB /fb is there'\n"
			if in.Level == 1 {
				for _, id := range in.FailToPass {
					f, _, _ := strings.Cut(id, "::")
					check += "test ! -e /testbed/" + f + " || echo 'TEST " + f + "'\n"
				}
			} else {
				// Level 2: the repository (masked, with the tests that
				// grade) is closed to any user but root.
				check += "setpriv --reuid=1000 --regid=1000 --clear-groups ls /testbed >/dev/null 2>&1 && echo 'TEST /testbed is open'\n"
			}
			check += "[ \"$(ls -A " + work + " | grep -v '^\\.git$')\" = '' ] && echo EMPTY\n"
			res, err := box.Exec(ctx, []string{"sh", "-c", check}, container.ExecOptions{Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			out := string(res.Stdout)
			if strings.Contains(out, "FB ") || strings.Contains(out, "TEST ") {
				t.Errorf("the starting point holds what it must not:\n%s", out)
			}
			if (in.Level == 2) != strings.Contains(out, "EMPTY") {
				t.Errorf("level %d: the agent's folder %s empty: %v", in.Level, work, strings.Contains(out, "EMPTY"))
			}
			if len(needles) == 0 {
				return
			}
			res, err = box.Exec(ctx, []string{"sh", "-c", leakScan}, container.ExecOptions{
				Timeout: 3 * time.Minute, Stdin: strings.NewReader(strings.Join(needles, "\n") + "\n")})
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
				f := strings.Fields(line)
				switch {
				case len(f) == 0:
				case f[0] == "FILE":
					t.Errorf("%s holds a line of the feature", f[1])
				case f[0] == "GITOBJ" && f[2] != "0":
					t.Errorf("%s's git objects hold %s lines of the feature", f[1], f[2])
				case f[0] == "COMMITS" && (f[2] != "1" || f[3] != "0" || f[4] != "0"):
					t.Errorf("%s: %s commits, %s stashes, %s tags; want 1, 0, 0", f[1], f[2], f[3], f[4])
				}
			}
		})
	}
}
