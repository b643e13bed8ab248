package evaluate

import (
	"os/exec"
	"testing"
)

// A test file's name from a dataset goes into a shell script quoted so
// that nothing in it expands.
func TestShSingleQuote(t *testing.T) {
	for _, name := range []string{"tests/test_a.py", "tests/it's $(touch x) `y` \"z\".py", "a\nb"} {
		out, err := exec.Command("sh", "-c", "printf %s "+shSingleQuote(name)).Output()
		if err != nil || string(out) != name {
			t.Errorf("%q came back as %q (%v)", name, out, err)
		}
	}
}

// TestWithoutFiles: the masked gold leaves out the blocks of the
// fail-to-pass test files, whichever name they go by, and keeps the rest
// byte for byte.
func TestWithoutFiles(t *testing.T) {
	code := "diff --git a/pkg/a.py b/pkg/a.py\nindex 1..2 100644\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1 @@\n-x\n+y\n"
	test := "diff --git a/tests/test_a.py b/tests/test_a.py\ndeleted file mode 100644\nindex 3..0\n--- a/tests/test_a.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-def test(): pass\n"
	more := "diff --git a/pkg/b.py b/pkg/b.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/b.py\n@@ -0,0 +1 @@\n+z\n"
	got := string(withoutFiles([]byte(code+test+more), []string{"tests/test_a.py"}))
	if got != code+more {
		t.Errorf("withoutFiles:\n%s", got)
	}
	if got := string(withoutFiles([]byte(code+more), []string{"tests/test_a.py"})); got != code+more {
		t.Errorf("a patch without the file changed:\n%s", got)
	}
}
