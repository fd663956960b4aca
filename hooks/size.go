package hooks

import (
	"errors"
	"fmt"
)

// checkSizes measures every file a commit writes before any check reads
// one (git cat-file --batch-check): a file over its limit is a limit
// violation, and a file that is no blob a store-path one. It reports
// whether it found any; the commit is then checked no further, so no
// oversized file is read whole into memory.
func (c *checker) checkSizes(ref, h, agent string, changes []change) (bool, error) {
	found := false
	for _, ch := range changes {
		switch {
		case ch.deleted():
			continue
		case ch.entry.mode == "160000":
			continue // a submodule names a commit elsewhere: checkPath refuses it
		}
		typ, size, err := c.cat.info(ch.entry.hash)
		if errors.Is(err, errMissing) {
			return false, fmt.Errorf("%s: %s is not in the repository", ch.path, ch.entry.hash)
		} else if err != nil {
			return false, err
		}
		v := Violation{Ref: ref, Commit: h, Agent: agent, Path: ch.path}
		switch limit := c.manifest.LimitFor(ch.path); {
		case typ != "blob":
			v.Rule, v.Detail = RuleStorePath, fmt.Sprintf("the entry names a %s, not a file's contents", typ)
		case size > limit:
			v.Rule, v.Detail = RuleLimit, fmt.Sprintf("%d bytes; the store's limit is %d (limits.max_document_bytes)", size, limit)
			if limit != c.manifest.Limits.MaxDocumentBytes {
				v.Detail = fmt.Sprintf("%d bytes; the store's settings files are held to %d", size, limit)
			}
		default:
			continue
		}
		found = true
		if err := c.add(v); err != nil {
			return true, err
		}
	}
	return found, nil
}
