package bench_test

import (
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
)

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		in     string
		errSub string // "" when the name is fine
	}{
		{"featurebench", ""},
		{"v1.0", ""},
		{"tiny-agent", ""},
		{"claude-code_opus-4.5", ""},
		{"A", ""},
		{"0day", ""},
		{"featbench__textkit-unique-slug.lv1", ""},
		{strings.Repeat("a", 200), ""},
		{strings.Repeat("a", 201), "longer than 200"},
		{"", "is empty"},
		{"a/b", "path separator"},
		{`a\b`, "path separator"},
		{"..", `contains ".."`},
		{"a..b", `contains ".."`},
		{".hidden", "starting with a letter or digit"},
		{"-flag", "starting with a letter or digit"},
		{"_x", "starting with a letter or digit"},
		{"bad slug", "may hold only"},
		{"tab\tname", "may hold only"},
		{"new\nline", "may hold only"},
		{"café", "may hold only"},
		{"a:b", "may hold only"},
		{"a%2e", "may hold only"},
	} {
		err := bench.CheckName(c.in)
		if c.errSub == "" {
			if err != nil {
				t.Errorf("CheckName(%q) = %v, want nil", c.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.errSub) {
			t.Errorf("CheckName(%q) = %v, want an error containing %q", c.in, err, c.errSub)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, c := range []struct {
		in     string
		errSub string
	}{
		{"https://arxiv.org/abs/2602.10975", ""},
		{"http://example.org", ""},
		{"https://example.org/a?b=c#d", ""},
		{"HTTPS://EXAMPLE.ORG/", ""}, // schemes are case-insensitive
		{"https://localhost:8080/x", ""},
		{"javascript:alert(1)", "only http and https"},
		{"JavaScript:alert(1)", "only http and https"},
		{"data:text/html,<script>alert(1)</script>", "only http and https"},
		{"vbscript:msgbox", "only http and https"},
		{"ftp://example.org/", "only http and https"},
		{"mailto:a@example.org", "only http and https"},
		{"//example.org/x", "only http and https"},
		{"/relative/path", "only http and https"},
		{"example.org", "only http and https"},
		{"", "only http and https"},
		{"https://", "has no host"},
		{"https:///path", "has no host"},
		{"http:example.org", "has no host"},
		{" javascript:alert(1)", "is not a URL"},
		{"java\tscript:alert(1)", "is not a URL"},
		{"http://exa mple.org", "is not a URL"},
		{"https://example.org/%zz", "is not a URL"},
		{"https://trusted.example@evil.example/", "holds a user name or password"},
		{"https://user:pass@example.org/", "holds a user name or password"},
		{"https://example.org/\u202egpj.exe", "holds the control character U+202E"},
		{"https://example.org/a\u0085b", "holds the control character U+0085"},
		{"https://example.org/" + strings.Repeat("a", 1980), ""},
		{"https://example.org/" + strings.Repeat("a", 1981), "is 2001 bytes; at most 2000"},
	} {
		err := bench.CheckURL(c.in)
		if c.errSub == "" {
			if err != nil {
				t.Errorf("CheckURL(%q) = %v, want nil", c.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.errSub) {
			t.Errorf("CheckURL(%q) = %v, want an error containing %q", c.in, err, c.errSub)
		}
	}
}
