package pybase

import (
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for python, suite := range map[string]string{"": "bookworm", "3.11": "bookworm", "3.13": "trixie"} {
		if b, ok := Lookup(python); !ok || b.Suite != suite {
			t.Errorf("Lookup(%q) = %+v, %v; want suite %s", python, b, ok, suite)
		}
	}
	for _, python := range []string{"3.12", "3", "3.11.2", "python3.13", " 3.13"} {
		if b, ok := Lookup(python); ok {
			t.Errorf("Lookup(%q) = %+v", python, b)
		}
		if msg := Check(python); !strings.Contains(msg, `"3.11" (Debian bookworm`) || !strings.Contains(msg, `or "3.13" (Debian trixie`) {
			t.Errorf("Check(%q) = %q", python, msg)
		}
	}
	if Check("3.13") != "" || Check("") != "" {
		t.Error("Check refuses a supported version")
	}
}
