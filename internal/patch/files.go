package patch

// Files lists the paths a patch touches, each once, in the order of the
// diff: a file's new name, or its old one when it is deleted (a rename
// counts as its new name only, as FeatBench's file-level localisation
// reads the files a patch leaves changed). A nil patch touches nothing.
func Files(p *Patch) []string {
	if p == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for i := range p.Files {
		if n := p.Files[i].Path(); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// FileRecall is file-level localisation: the share of the gold patch's
// files that the prediction touches, |files(pred) ∩ files(gold)| /
// |files(gold)|. It is 0 when the prediction touches no file, and 0 when
// the gold patch touches none (there is nothing to find). Leaving test
// files out of both is the caller's business.
func FileRecall(pred, gold *Patch) float64 {
	g := Files(gold)
	if len(g) == 0 {
		return 0
	}
	touched := map[string]bool{}
	for _, n := range Files(pred) {
		touched[n] = true
	}
	hit := 0
	for _, n := range g {
		if touched[n] {
			hit++
		}
	}
	return float64(hit) / float64(len(g))
}

// SameFiles reports whether the prediction touches exactly the gold
// patch's files (FeatBench's "the set of files modified by the generated
// patch matches the ground-truth"). Two patches that touch nothing are
// not a match: an empty prediction localises nothing.
func SameFiles(pred, gold *Patch) bool {
	p, g := Files(pred), Files(gold)
	if len(p) == 0 || len(p) != len(g) {
		return false
	}
	set := map[string]bool{}
	for _, n := range g {
		set[n] = true
	}
	for _, n := range p {
		if !set[n] {
			return false
		}
	}
	return true
}
