//go:build !linux

package site

// exchange is Linux's renameat2(RENAME_EXCHANGE); elsewhere the swap
// falls back to two renames.
func exchange(a, b string) error { return errNoExchange }
