package memory

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/aiwg/aiwg-state/internal/errkind"
)

// ReadLines reads the tiered state specification's JSON Lines bridge: one record a line, as
// memory export writes them. Blank lines are skipped; a line that is not
// a valid record is an error naming it (ErrInvalid), and nothing is
// returned.
func ReadLines(r io.Reader) ([]Record, error) {
	var recs []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var rec Record
		if err := dec.Decode(&rec); err != nil {
			return nil, errkind.Errorf(ErrInvalid, "line %d: not a memory record: %v", n, err)
		}
		if dec.More() {
			return nil, errkind.Errorf(ErrInvalid, "line %d: more than one record on the line", n)
		}
		if err := rec.Check(); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, errkind.Errorf(ErrInvalid, "%v", err)
	}
	return recs, nil
}
