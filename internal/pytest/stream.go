package pytest

import (
	"bytes"
	"encoding/json"
)

// streamEvent is one line of the plugin's JSON stream.
type streamEvent struct {
	Event      string   `json:"event"` // sessionstart, start, report, collect, sessionfinish
	NodeID     string   `json:"nodeid"`
	When       string   `json:"when"`
	Outcome    string   `json:"outcome"`
	ExcType    string   `json:"exc_type"`
	Message    string   `json:"message"`
	WasXFail   *string  `json:"wasxfail"`
	Duration   float64  `json:"duration"`
	ExitStatus *int     `json:"exitstatus"`
	Pytest     string   `json:"pytest"`
	Python     string   `json:"python"`
	Rootdir    string   `json:"rootdir"`
	OK         *bool    `json:"ok"`        // check: pytest's machinery is as it started
	Problems   []string `json:"problems"`  // check: what changed
	DiskFull   bool     `json:"disk_full"` // limits, end: a folder the tests may write to is full
	// end: the runner's last line (runner.py).
	StreamBytes *int64 `json:"stream_bytes"`
	Exit        *int   `json:"exit"`
	Signal      *int   `json:"signal"`
	Left        int    `json:"left"`
	// audit (audit.py).
	Kind   string `json:"kind"`
	What   string `json:"what"`
	At     string `json:"at"`
	Target string `json:"target"`
}

// AuditRecord is one thing the code under test did that the audit hook
// records (audit.py): its kind, the audited event, where, and for a code
// swap or a test file opened, what.
type AuditRecord struct {
	Kind   string `json:"kind"`
	What   string `json:"what"`
	At     string `json:"at"`
	Target string `json:"target,omitempty"`
}

// runEnd is the runner's last line: how pytest ended, seen from outside it.
type runEnd struct {
	streamBytes int64 // what the tests' side wrote before it
	at          int64 // where the line starts: after those bytes and a newline
	last        bool  // nothing but blank lines follows it
	exit        *int
	signal      *int
	left        int
}

// stream is what the JSON lines say.
type stream struct {
	present  bool
	pytest   string
	started  bool // sessionstart seen
	finished bool // sessionfinish seen
	exit     int
	bad      int // lines that are not JSON (a line cut by a kill)
	running  string
	order    []string
	tests    map[string]*streamTest
	collect  []streamEvent
	// checks counts the plugin's integrity checks (one after each test and
	// one at the end); trusted are the tests an intact check followed;
	// problems are what a failed check saw.
	checks   int
	trusted  map[string]bool
	pending  []string
	problems []string
	diskFull bool
	// The runner's end line (a run of the runner since it writes one);
	// what came where it must not: a report twice, plugin lines after
	// sessionfinish; and the audit hook's records.
	end      *runEnd
	ends     int
	dups     []string
	late     []string
	audit    []AuditRecord
	reported map[[2]string]bool
}

// maxAudit bounds the audit records kept of one run (the hook writes at
// most 200).
const maxAudit = 500

// streamTest gathers the reports of one test, by phase.
type streamTest struct {
	phases map[string]streamEvent
}

func parseStream(data []byte) stream {
	s := stream{tests: map[string]*streamTest{}, trusted: map[string]bool{}, reported: map[[2]string]bool{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return s
	}
	s.present = true
	var at int64
	for _, line := range bytes.Split(data, []byte("\n")) {
		start := at
		at += int64(len(line)) + 1
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if s.end != nil {
			s.end.last = false
		}
		var ev streamEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			s.bad++
			continue
		}
		if s.finished {
			switch ev.Event {
			case "check", "audit", "end", "limits":
				// The plugin's last check, the audit hook, the runner.
			default:
				s.late = append(s.late, ev.Event+" "+ev.NodeID)
			}
		}
		switch ev.Event {
		case "end":
			s.diskFull = s.diskFull || ev.DiskFull
			s.ends++
			e := &runEnd{at: start, last: true, exit: ev.Exit, signal: ev.Signal, left: ev.Left, streamBytes: -1}
			if ev.StreamBytes != nil {
				e.streamBytes = *ev.StreamBytes
			}
			s.end = e
		case "audit":
			if len(s.audit) < maxAudit {
				s.audit = append(s.audit, AuditRecord{Kind: ev.Kind, What: ev.What, At: ev.At, Target: ev.Target})
			}
		case "sessionstart":
			s.started, s.pytest = true, ev.Pytest
		case "sessionfinish":
			s.finished = true
			if ev.ExitStatus != nil {
				s.exit = *ev.ExitStatus
			}
		case "start":
			s.running = ev.NodeID
		case "collect":
			s.collect = append(s.collect, ev)
		case "limits":
			s.diskFull = s.diskFull || ev.DiskFull
		case "check":
			s.checks++
			if ev.OK != nil && *ev.OK {
				for _, id := range s.pending {
					s.trusted[id] = true
				}
			} else {
				s.problems = append(s.problems, ev.Problems...)
				if len(ev.Problems) == 0 {
					s.problems = append(s.problems, "the plugin's check failed")
				}
			}
			s.pending = s.pending[:0]
		case "report":
			if k := [2]string{ev.NodeID, ev.When}; s.reported[k] {
				s.dups = append(s.dups, ev.NodeID+" ("+ev.When+")")
			} else {
				s.reported[k] = true
			}
			s.pending = append(s.pending, ev.NodeID)
			t := s.tests[ev.NodeID]
			if t == nil {
				t = &streamTest{phases: map[string]streamEvent{}}
				s.tests[ev.NodeID] = t
				s.order = append(s.order, ev.NodeID)
			}
			t.phases[ev.When] = ev
			if ev.When == "teardown" && s.running == ev.NodeID {
				s.running = ""
			}
		}
	}
	return s
}

// result combines a test's phases as pytest and its JUnit writer do. ok is
// false when no phase decided the outcome yet (the run stopped during setup
// or the call).
func (t *streamTest) result() (r result, ok bool) {
	for _, p := range t.phases {
		r.seconds += p.Duration
	}
	setup, hasSetup := t.phases["setup"]
	call, hasCall := t.phases["call"]
	switch {
	case hasSetup && setup.Outcome == "failed":
		r.status, r.exc, r.msg = StatusError, setup.ExcType, setup.Message
	case hasSetup && setup.Outcome == "skipped":
		r.status, r.msg = StatusSkipped, setup.Message
		if setup.WasXFail != nil {
			r.status, r.exc = StatusXFailed, setup.ExcType
		}
	case hasCall:
		r.status, r.exc, r.msg = callStatus(call), call.ExcType, call.Message
	default:
		return r, false
	}
	if td, ok := t.phases["teardown"]; ok && td.Outcome == "failed" && rank(StatusError) > rank(r.status) {
		r.status, r.exc, r.msg = StatusError, td.ExcType, td.Message
	}
	if r.exc == "" && r.status != StatusPassed && r.status != StatusSkipped && r.status != StatusXPassed {
		r.exc = guessExcType(r.msg, "")
	}
	return r, true
}

func callStatus(call streamEvent) Status {
	switch call.Outcome {
	case "passed":
		if call.WasXFail != nil {
			return StatusXPassed
		}
		return StatusPassed
	case "skipped":
		if call.WasXFail != nil {
			return StatusXFailed
		}
		return StatusSkipped
	}
	if call.ExcType == "Timeout" || isTimeoutMessage(call.Message) {
		return StatusTimeout
	}
	return StatusFailed
}
