package bench

import (
	"fmt"
	"testing"
	"unsafe"
)

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
		it := d.interner()
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
