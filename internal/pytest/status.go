package pytest

// Status is the outcome of one test, or of one expected id.
type Status string

// The statuses, as written in reports.
const (
	StatusPassed          Status = "passed"
	StatusFailed          Status = "failed"
	StatusError           Status = "error" // a setup or teardown error
	StatusSkipped         Status = "skipped"
	StatusXFailed         Status = "xfailed"
	StatusXPassed         Status = "xpassed" // non-strict; a strict XPASS fails
	StatusMissing         Status = "missing" // no result, and neither a timeout nor a collection error explains it
	StatusTimeout         Status = "timeout"
	StatusCollectionError Status = "collection_error"
)

// Passed reports whether a FAIL_TO_PASS test with status s passed: only
// [StatusPassed] does (see the package doc).
func Passed(s Status) bool { return s == StatusPassed }

// Maintained reports whether a PASS_TO_PASS test with status s still passes:
// passed, xfailed and xpassed do; skipped, missing and every failure do not.
func Maintained(s Status) bool {
	return s == StatusPassed || s == StatusXFailed || s == StatusXPassed
}

// FailureMode names what made o fail, for failure-mode charts: the exception
// type when one is known (NameError, AttributeError, AssertionError, Failed
// for pytest.fail and a pytest.raises that did not raise, ImportError for a
// test module that does not import, ...), else a name for the status
// ("Timeout", "CollectionError", "Error", "Skipped", "Missing", "XFailed",
// "XPassed"). It is "" for a passed outcome.
func FailureMode(o Outcome) string {
	switch o.Status {
	case StatusPassed:
		return ""
	case StatusTimeout:
		return "Timeout"
	case StatusSkipped:
		return "Skipped"
	case StatusMissing:
		return "Missing"
	case StatusXPassed:
		return "XPassed"
	}
	if o.ExcType != "" {
		return o.ExcType
	}
	switch o.Status {
	case StatusCollectionError:
		return "CollectionError"
	case StatusError:
		return "Error"
	case StatusXFailed:
		return "XFailed"
	}
	return "Failed"
}

// rank orders the results of one test for combining them: the higher wins.
func rank(s Status) int {
	switch s {
	case StatusCollectionError:
		return 8
	case StatusError:
		return 7
	case StatusTimeout:
		return 6
	case StatusFailed:
		return 5
	case StatusMissing:
		return 4
	case StatusSkipped:
		return 3
	case StatusXFailed:
		return 2
	case StatusXPassed:
		return 1
	}
	return 0
}

// summaryWord maps a status to what the -rA summary can say about it, for
// comparing the two: the summary has no timeout or collection error.
func summaryWord(s Status) Status {
	switch s {
	case StatusTimeout:
		return StatusFailed
	case StatusCollectionError:
		return StatusError
	}
	return s
}
