//go:build !unix

package testenv

import "testing"

// lockSwarm: no swarm tests run outside unix (scripts/provision-swarm.sh).
func lockSwarm(testing.TB) {}
