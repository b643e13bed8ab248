package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/config"
)

// TestLoadAgents: the shipped featbench.toml's agents and prices load,
// with the defaults a table leaves out.
func TestLoadAgents(t *testing.T) {
	cfg, err := config.Load(filepath.Join("..", config.FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"claude-code", "codex", "gemini-cli", "qwen-code", "shell-loop"} {
		a := cfg.Agent(name)
		if a == nil {
			t.Errorf("featbench.toml has no agent %s", name)
			continue
		}
		if _, ok := cfg.Prices[a.Model]; !ok {
			t.Errorf("agent %s's model %s has no price", name, a.Model)
		}
		if a.Install != "" {
			if _, err := os.Stat(filepath.Join("..", a.Install, "package.json")); err != nil && name != "shell-loop" {
				t.Errorf("agent %s: %v", name, err)
			}
		}
	}
	cfg, err = config.Load(write(t, "[[agents]]\nname = \"a\"\ncommand = \"run\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Agents[0]; a.API != "openai" || a.TimeoutDuration().Minutes() != 30 || a.MaxTurns != 0 {
		t.Errorf("defaults: %+v", a)
	}
}

// TestLoadAgentErrors: every mistake of an [[agents]] or [prices] table
// is reported with the file, the line and the field.
func TestLoadAgentErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		subs []string
	}{
		{"unknown key", "[[agents]]\nname = \"a\"\ncommand = \"x\"\nmax_turn = 3\n",
			[]string{config.FileName + ":4:", `"agents[0].max_turn"`, `did you mean "agents[0].max_turns"`}},
		{"no command", "[[agents]]\nname = \"a\"\n",
			[]string{`"agents[0].command"`, "is missing"}},
		{"bad name", "[[agents]]\nname = \"A b\"\ncommand = \"x\"\n",
			[]string{config.FileName + ":2:", `"agents[0].name"`}},
		{"twice", "[[agents]]\nname = \"a\"\ncommand = \"x\"\n[[agents]]\nname = \"a\"\ncommand = \"x\"\n",
			[]string{config.FileName + ":5:", `"agents[1].name"`, "listed twice"}},
		{"api", "[[agents]]\nname = \"a\"\ncommand = \"x\"\napi = \"grpc\"\n",
			[]string{`"agents[0].api"`, "want one of openai, anthropic, gemini"}},
		{"upstream", "[[agents]]\nname = \"a\"\ncommand = \"x\"\nupstream = \"ftp://x\"\n",
			[]string{`"agents[0].upstream"`}},
		{"key passed through", "[[agents]]\nname = \"a\"\ncommand = \"x\"\napi_key_env = \"K\"\nenv = [\"K\"]\n",
			[]string{`"agents[0].env[0]"`, "stays with the proxy"}},
		{"harness variable", "[[agents]]\nname = \"a\"\ncommand = \"x\"\nenv = [\"FEATBENCH_MODEL\"]\n",
			[]string{`"agents[0].env[0]"`, "harness's"}},
		{"install outside", "[[agents]]\nname = \"a\"\ncommand = \"x\"\ninstall = \"../x\"\n",
			[]string{`"agents[0].install"`, "not a folder of the project"}},
		{"install absolute", "[[agents]]\nname = \"a\"\ncommand = \"x\"\ninstall = \"/opt/x\"\n",
			[]string{`"agents[0].install"`}},
		{"timeout", "[[agents]]\nname = \"a\"\ncommand = \"x\"\ntimeout = \"soon\"\n",
			[]string{`"agents[0].timeout"`}},
		{"negative limits", "[[agents]]\nname = \"a\"\ncommand = \"x\"\nmax_turns = -1\nmax_tokens = -2\nmax_cost = -0.5\n",
			[]string{`"agents[0].max_turns"`, `"agents[0].max_tokens"`, `"agents[0].max_cost"`}},
		{"limit of the wrong type", "[[agents]]\nname = \"a\"\ncommand = \"x\"\nmax_turns = \"ten\"\n",
			[]string{config.FileName + ":4:", `"agents[0].max_turns"`}},
		{"negative price", "[prices.\"m-1\"]\ninput = -1.0\noutput = 2.0\n",
			[]string{config.FileName + ":2:", `"prices.m-1.input"`}},
		{"unknown price key", "[prices.\"m-1\"]\ninpt = 1.0\n",
			[]string{`"prices.m-1.inpt"`, `did you mean "prices.m-1.input"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, c.src)
			_, err := config.Load(p)
			if err == nil {
				t.Fatalf("Load succeeded on\n%s", c.src)
			}
			for _, s := range c.subs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}
