package config_test

import (
	"path/filepath"
	"testing"

	"github.com/featbench/featbench/config"
)

// TestShippedConfigs: the project's featbench.toml and the real libraries'
// configuration (scripts/real-libs.toml, which no command loads in CI)
// pass the strict decoder and validation, so an edit to either that
// breaks it fails here, not in a maintainer's collection.
func TestShippedConfigs(t *testing.T) {
	root := filepath.Join("..")
	for _, f := range []string{"featbench.toml", filepath.Join("scripts", "real-libs.toml")} {
		c, err := config.LoadRoot(filepath.Join(root, f), root)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(c.Collect.Repos) == 0 {
			t.Errorf("%s: no [[collect.repo]] table", f)
		}
	}
}
