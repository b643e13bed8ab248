package container

import "testing"

// TestDefaultHost: with DOCKER_HOST unset, the engine that
// scripts/provision-docker.sh started is found; DOCKER_HOST wins when set.
func TestDefaultHost(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "DOCKER_HOST" {
				return v
			}
			return ""
		}
	}
	sock := func(there bool) func(string) bool {
		return func(p string) bool { return there && p == ProjectSocket }
	}
	for _, tc := range []struct {
		env   string
		there bool
		want  string
	}{
		{"", true, "unix://" + ProjectSocket},
		{"", false, ""},
		{"unix:///elsewhere.sock", true, ""},
	} {
		if got := defaultHost(env(tc.env), sock(tc.there)); got != tc.want {
			t.Errorf("DOCKER_HOST=%q, socket there %v: %q, want %q", tc.env, tc.there, got, tc.want)
		}
	}
}
