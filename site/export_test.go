package site

// Hooks into the build for the tests of package site_test.

// SetSavedHook makes f run after each file a build saves into its stage;
// an error from f fails the build there. It returns the undo.
func SetSavedHook(f func(rel string) error) (restore func()) {
	old := testHookSaved
	testHookSaved = f
	return func() { testHookSaved = old }
}

// SetNoExchange makes builds swap their site into place with the
// fall-back of two renames. It returns the undo.
func SetNoExchange() (restore func()) {
	old := testNoExchange
	testNoExchange = true
	return func() { testNoExchange = old }
}

// ListenAddr is the address --serve listens on for the address given.
var ListenAddr = listenAddr

// FeedURL is templates.Site.FeedURL for the options.
func FeedURL(opts Options) string { return feedURL(opts.Config) }
