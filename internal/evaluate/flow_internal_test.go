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
