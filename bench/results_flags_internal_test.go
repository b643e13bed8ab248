package bench

import (
	"reflect"
	"testing"
)

// The fast results decoder reads flags as the line decoder does, and
// declines a flags key given twice.
func TestDecodeResultsFlags(t *testing.T) {
	in := `{"instance_id":"a","resolved":false,"patch_applied":true,"f2p_passed":[],"f2p_failed":[],"p2p_passed":[],"p2p_failed":[],"files_changed":1,"flags":["touches-tests","gold-identical"]}` + "\n" +
		`{"instance_id":"b","flags":[]}` + "\n" + `{"instance_id":"c","flags":null}` + "\n" + `{"instance_id":"d","flags":["not-a-flag"]}` + "\n"
	fast, ok := decodeResults([]byte(in), testInterner)
	if !ok {
		t.Fatal("the fast path declined flags")
	}
	slow, ps := decodeResultLines("x.jsonl", []byte(in), nil)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("fast and line decoders disagree:\nfast %+v\nline %+v", fast, slow)
	}
	if got := fast[0].Flags; len(got) != 2 || got[0] != FlagTouchesTests || got[1] != FlagGoldIdentical {
		t.Errorf("flags read as %q", got)
	}
	if _, ok := decodeResults([]byte(`{"instance_id":"a","flags":[],"flags":["reads-git"]}`+"\n"), testInterner); ok {
		t.Error("the fast path accepted a flags key given twice")
	}
}
