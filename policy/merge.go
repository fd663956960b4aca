package policy

// TakenByMerge reports whether what a merge commit holds at one path was
// brought in from its parents rather than written by whoever made the
// merge, so that the policy judges the path on the parents' commits (which
// are judged on their own) and not as the merger's write.
//
// Each argument is the entry at the path (any comparable spelling of mode
// and object id; "" when the path is absent): result in the merge, parents
// in the merge's parents (the first parent first), bases in every merge
// base of the parents (the empty tree's "" when the parents share no
// history).
//
// A path is taken only as a clean three-way merge would settle it: every
// parent that differs from the result left the path as the bases have it,
// and a result that differs from the first parent is a change another
// parent made since the bases. Anything else — a parent's change thrown
// away, an entry older than the bases brought back (a second parent that
// is an old commit restores nothing: its entry is the bases'), a path
// deleted or edited by hand — is the merger's own write. With several
// bases (a criss-cross history, or an octopus merge) the rule is
// conservative: a parent left the path as it was only when it equals every
// base, and made a change only when it differs from every base.
func TakenByMerge(result string, parents, bases []string) bool {
	if len(parents) < 2 {
		return false
	}
	if len(bases) == 0 {
		bases = []string{""}
	}
	unchanged := func(e string) bool {
		for _, b := range bases {
			if e != b {
				return false
			}
		}
		return true
	}
	changed := func(e string) bool {
		for _, b := range bases {
			if e == b {
				return false
			}
		}
		return true
	}
	brought := false
	for i, e := range parents {
		if e == result {
			brought = brought || (i > 0 && changed(e))
			continue
		}
		if !unchanged(e) {
			return false // a change of this parent is thrown away
		}
	}
	return result == parents[0] || brought
}
