package bench

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestInternerFindsInstancesInAnyOrder: the interner guesses that results
// follow the split's order, and whatever the order (that one, reversed,
// skipping, with unknown ids between), it returns the dataset's own id of
// a known instance and reports that instance, and "" and nil for an
// unknown one.
func TestInternerFindsInstancesInAnyOrder(t *testing.T) {
	d := &Dataset{byID: map[string]*Instance{}, testIDs: map[string]string{}}
	for k := range 20 {
		in := &Instance{InstanceID: fmt.Sprintf("repo__%d", k), pos: k}
		d.Instances = append(d.Instances, in)
		d.byID[in.InstanceID] = in
	}
	split := []*Instance{}
	for _, in := range d.Instances {
		if in.pos%3 != 1 {
			split = append(split, in)
		}
	}
	orders := map[string][]string{}
	for k := range d.Instances {
		orders["in order"] = append(orders["in order"], d.Instances[k].InstanceID)
		orders["reversed"] = append(orders["reversed"], d.Instances[len(d.Instances)-1-k].InstanceID)
		orders["every seventh"] = append(orders["every seventh"], d.Instances[(k*7)%len(d.Instances)].InstanceID)
		orders["unknown between"] = append(orders["unknown between"], d.Instances[k].InstanceID, fmt.Sprintf("repo__%d", 100+k))
	}
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	for _, order := range [][]*Instance{nil, d.Instances, split, {d.Instances[3], d.Instances[2]}} {
		for name, ids := range orders {
			it := d.interner(order)
			for _, id := range ids {
				got, want := it.instance([]byte(id)), d.byID[id]
				switch {
				case want == nil && (got != "" || it.found() != nil):
					t.Fatalf("%s, order of %d: unknown %s gave %q, %v", name, len(order), id, got, it.found())
				case want != nil && (!same(got, want.InstanceID) || it.found() != want):
					t.Fatalf("%s, order of %d: %s gave %q (the dataset's: %v), instance %v", name, len(order), id, got, same(got, want.InstanceID), it.found())
				}
			}
		}
	}
}

// TestInternerSharesTheDatasetsStrings: whatever order a result lists its
// tests in, the interner returns the dataset's own string for a known test
// and "" for an unknown one, and it looks at no more than internScan of an
// instance's tests before hashing.
func TestInternerSharesTheDatasetsStrings(t *testing.T) {
	in := &Instance{InstanceID: "i1"}
	for k := 0; k < 100; k++ {
		in.FailToPass = append(in.FailToPass, fmt.Sprintf("t.py::f%d", k))
		in.PassToPass = append(in.PassToPass, fmt.Sprintf("t.py::p%d", k))
	}
	other := &Instance{InstanceID: "i2", FailToPass: []string{"u.py::g"}}
	d := &Dataset{
		byID:    map[string]*Instance{"i1": in, "i2": other},
		testIDs: map[string]string{}}
	for _, x := range []*Instance{in, other} {
		for _, id := range append(append([]string{}, x.FailToPass...), x.PassToPass...) {
			d.testIDs[id] = id
		}
	}
	all := append(append([]string{}, in.FailToPass...), in.PassToPass...)
	orders := map[string][]int{}
	for k := range all {
		orders["in order"] = append(orders["in order"], k)
		orders["reversed"] = append(orders["reversed"], len(all)-1-k)
		orders["every third"] = append(orders["every third"], (k*3)%len(all))
	}
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	for name, order := range orders {
		it := d.interner(nil)
		if got := it.instance([]byte("i1")); !same(got, in.InstanceID) {
			t.Fatalf("%s: instance id not the dataset's", name)
		}
		for _, k := range order {
			got := it.test([]byte(all[k]))
			if got != all[k] || !same(got, all[k]) {
				t.Fatalf("%s: test %q interned as %q (shared %v)", name, all[k], got, same(got, all[k]))
			}
		}
		if got := it.test([]byte("u.py::g")); !same(got, other.FailToPass[0]) {
			t.Fatalf("%s: another instance's test not found through the map", name)
		}
		if got := it.test([]byte("t.py::nope")); got != "" {
			t.Fatalf("%s: unknown test interned as %q", name, got)
		}
	}
}

// TestCheckResultFindsTestsInAnyOrder: checkResult guesses that a result
// lists its tests in the instance's order; whatever the order, it finds
// each test, refuses one that is not the list's or is listed twice, and
// leaves every id the instance's own string.
func TestCheckResultFindsTestsInAnyOrder(t *testing.T) {
	in := &Instance{InstanceID: "i", testIndex: map[string]int{}}
	for k := range 6 {
		in.FailToPass = append(in.FailToPass, fmt.Sprintf("t.py::f%d", k))
		in.PassToPass = append(in.PassToPass, fmt.Sprintf("t.py::p%d", k))
	}
	for k, id := range append(append([]string{}, in.FailToPass...), in.PassToPass...) {
		in.testIndex[id] = k
	}
	f, p := in.FailToPass, in.PassToPass
	copyOf := func(ids ...string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = string([]byte(id)) // not the instance's string
		}
		return out
	}
	for _, c := range []struct {
		name                   string
		f2pp, f2pf, p2pp, p2pf []string
		want                   string // a problem's field and text; "" for none
	}{
		{"in order", f[:4], f[4:], p, nil, ""},
		{"reversed", []string{f[5], f[3], f[1]}, []string{f[4], f[2], f[0]}, []string{p[5], p[4], p[3], p[2], p[1], p[0]}, nil, ""},
		{"skipping back and forth", []string{f[0], f[2], f[1], f[5], f[3], f[4]}, nil, []string{p[1], p[0], p[2], p[4]}, []string{p[3], p[5]}, ""},
		{"twice in a list", []string{f[0], f[1], f[1]}, f[2:], p, nil, `f2p_passed: test "t.py::f1" is also listed in f2p_passed`},
		{"twice in order", []string{f[0], f[0]}, f[1:], p, nil, `f2p_passed: test "t.py::f0" is also listed in f2p_passed`},
		{"passed and failed", f, nil, p[:3], p[2:], `p2p_failed: test "t.py::p2" is also listed in p2p_passed`},
		{"fail-to-pass test in the other list", f[:5], nil, append([]string{f[5]}, p...), nil, `p2p_passed: test "t.py::f5" is not in the instance's PASS_TO_PASS`},
		{"pass-to-pass test in the other list", append(append([]string{}, f...), p[0]), nil, p[1:], nil, `f2p_passed: test "t.py::p0" is not in the instance's FAIL_TO_PASS`},
		{"unknown test", f, nil, []string{p[0], "t.py::nope", p[1]}, nil, `p2p_passed: test "t.py::nope" is not in the instance's PASS_TO_PASS`},
	} {
		res := &Result{InstanceID: "i", PatchApplied: true, F2PPassed: copyOf(c.f2pp...), F2PFailed: copyOf(c.f2pf...),
			P2PPassed: copyOf(c.p2pp...), P2PFailed: copyOf(c.p2pf...)}
		res.Resolved = len(c.f2pf) == 0 && len(c.p2pf) == 0 && len(c.f2pp) == len(f) && len(c.p2pp) == len(p) && c.want == ""
		ps := checkResult("results.jsonl", 1, res, in, nil)
		got := ""
		for _, pr := range ps {
			if pr.Field != "resolved" {
				got = pr.Field + ": " + pr.Msg
			}
		}
		if got != c.want {
			t.Errorf("%s: problems %v, want %q", c.name, ps, c.want)
		}
		if c.want != "" {
			continue
		}
		for _, list := range [][]string{res.F2PPassed, res.F2PFailed, res.P2PPassed, res.P2PFailed} {
			for _, id := range list {
				k := in.testIndex[id]
				own := append(append([]string{}, f...), p...)[k]
				if unsafe.StringData(id) != unsafe.StringData(own) {
					t.Errorf("%s: test %s is not the instance's string", c.name, id)
				}
			}
		}
	}
}
