package config

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Agent is one [[agents]] table: a coding agent `eval infer` runs on each
// instance, in the instance's container, with the harness's metering proxy
// as its only way out.
type Agent struct {
	Name        string `toml:"name"`        // what --agent names, e.g. "claude-code"
	Description string `toml:"description"` // one line, for `eval infer --help`
	// Install is a folder of the project copied into the agent's image
	// layer at /opt/featbench/agent; when it holds package.json and
	// package-lock.json, the packages are fetched on this machine with
	// `npm ci --ignore-scripts` (cached by the lockfile's content) and
	// their install scripts run in the layer's build, without network.
	Install string `toml:"install"`
	// Command is run by bash, as the agent's user, in the folder the agent
	// works in: FEATBENCH_INSTRUCTION (the instruction file),
	// FEATBENCH_MODEL, FEATBENCH_PROXY (the proxy's base URL, e.g.
	// http://127.0.0.1:9100), FEATBENCH_WORKDIR and FEATBENCH_MAX_TURNS
	// are set.
	Command string `toml:"command"`
	// API is what the agent speaks: "openai" (chat completions and
	// responses), "anthropic" (messages) or "gemini" (generateContent):
	// the proxy sends the upstream key the way that API wants it.
	API string `toml:"api"`
	// Upstream is the API's base URL the proxy forwards to, e.g.
	// https://api.anthropic.com or https://api.openai.com/v1.
	Upstream string `toml:"upstream"`
	// APIKeyEnv names the variable holding the upstream key, read by the
	// proxy on this machine; the container never sees it.
	APIKeyEnv string `toml:"api_key_env"`
	Model     string `toml:"model"` // the default for --model
	// Env are environment variables passed through, by name, from this
	// machine to the agent (never the key: that stays with the proxy).
	Env []string `toml:"env"`
	// Limits of one instance: wall time, model requests (turns), tokens
	// in and out together, and dollars; 0 for no limit (but timeout).
	Timeout   string  `toml:"timeout"`
	MaxTurns  int     `toml:"max_turns"`
	MaxTokens int64   `toml:"max_tokens"`
	MaxCost   float64 `toml:"max_cost"`
}

// SetDefaults fills an [[agents]] table before the file's keys are read
// into it.
func (a *Agent) SetDefaults() {
	*a = Agent{API: "openai", Timeout: "30m"}
}

// TimeoutDuration is the agent's wall time on one instance (checked by
// Load).
func (a Agent) TimeoutDuration() time.Duration {
	d, _ := time.ParseDuration(a.Timeout)
	return d
}

// Agent returns the [[agents]] table of that name, or nil.
func (c Config) Agent(name string) *Agent {
	for i := range c.Agents {
		if c.Agents[i].Name == name {
			return &c.Agents[i]
		}
	}
	return nil
}

// Price is what one model's tokens cost, in US dollars per million
// tokens: [prices."model-name"].
type Price struct {
	Input float64 `toml:"input"`
	// CachedInput is input read from the provider's prompt cache (OpenAI's
	// cached_tokens, Anthropic's cache_read_input_tokens, Gemini's
	// cachedContentTokenCount); 0 means the input price.
	CachedInput float64 `toml:"cached_input"`
	// CacheWrite is input written to Anthropic's prompt cache
	// (cache_creation_input_tokens); 0 means the input price.
	CacheWrite float64 `toml:"cache_write"`
	Output     float64 `toml:"output"`
}

var (
	agentName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	modelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$`)
)

// APIs are the values of an agent's api.
var APIs = []string{"openai", "anthropic", "gemini"}

// checkAgents checks the [[agents]] tables and the price table.
func (c *checker) checkAgents(cfg *Config) {
	seen := map[string]bool{}
	for i := range cfg.Agents {
		a := &cfg.Agents[i]
		key := fmt.Sprintf("agents[%d]", i)
		switch {
		case !agentName.MatchString(a.Name):
			c.add(key+".name", "%q is not an agent name (lower-case letters, digits, '.', '_', '-')", a.Name)
		case seen[a.Name]:
			c.add(key+".name", "%q is listed twice", a.Name)
		}
		seen[a.Name] = true
		if a.Install != "" {
			// Whether it exists is eval infer's to say: a copy of the
			// file without the agents' folders (a test's, the gate's
			// checkout) is still a valid configuration.
			if !filepath.IsLocal(a.Install) || checkChars(a.Install) != nil {
				c.add(key+".install", "%q is not a folder of the project", a.Install)
			}
		}
		if strings.TrimSpace(a.Command) == "" {
			c.add(key+".command", "is missing: the shell command that runs the agent on $FEATBENCH_INSTRUCTION")
		}
		if !slices.Contains(APIs, a.API) {
			c.add(key+".api", "is %q; want one of %s", a.API, strings.Join(APIs, ", "))
		}
		if a.Upstream != "" {
			if u, err := url.Parse(a.Upstream); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.User != nil {
				c.add(key+".upstream", "%q is not an http(s) base URL such as https://api.openai.com/v1", a.Upstream)
			}
		}
		if a.APIKeyEnv != "" && !envName.MatchString(a.APIKeyEnv) {
			c.add(key+".api_key_env", "%q is not an environment variable name", a.APIKeyEnv)
		}
		if a.Model != "" && !modelName.MatchString(a.Model) {
			c.add(key+".model", "%q is not a model name", a.Model)
		}
		for j, e := range a.Env {
			switch {
			case !envName.MatchString(e):
				c.add(fmt.Sprintf("%s.env[%d]", key, j), "%q is not an environment variable name", e)
			case e == a.APIKeyEnv:
				c.add(fmt.Sprintf("%s.env[%d]", key, j), "%q is the upstream key (api_key_env): it stays with the proxy, never in the container", e)
			case strings.HasPrefix(e, "FEATBENCH_"):
				c.add(fmt.Sprintf("%s.env[%d]", key, j), "%q: FEATBENCH_ variables are the harness's", e)
			}
		}
		if t, err := time.ParseDuration(a.Timeout); err != nil || t <= 0 {
			c.add(key+".timeout", "%q is not a positive duration such as \"30m\"", a.Timeout)
		}
		if a.MaxTurns < 0 {
			c.add(key+".max_turns", "is %d; want 0 (no limit) or more", a.MaxTurns)
		}
		if a.MaxTokens < 0 {
			c.add(key+".max_tokens", "is %d; want 0 (no limit) or more", a.MaxTokens)
		}
		if math.IsNaN(a.MaxCost) || math.IsInf(a.MaxCost, 0) || a.MaxCost < 0 {
			c.add(key+".max_cost", "is %v; want 0 (no limit) or more dollars", a.MaxCost)
		}
	}
	for _, m := range sortedNames(cfg.Prices) {
		p := cfg.Prices[m]
		key := "prices." + m
		if !modelName.MatchString(m) {
			c.add(key, "%q is not a model name", m)
		}
		for _, f := range []struct {
			k string
			v float64
		}{{"input", p.Input}, {"cached_input", p.CachedInput}, {"cache_write", p.CacheWrite}, {"output", p.Output}} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 || f.v > 10000 {
				c.add(key+"."+f.k, "is %v; want 0 to 10000 dollars per million tokens", f.v)
			}
		}
	}
}

func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
