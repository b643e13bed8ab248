//go:build !unix

package evaluate

// processAlive cannot tell elsewhere: every container is kept.
func processAlive(int) bool { return true }
