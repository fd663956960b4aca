package trajectory

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxAge keeps ages far from time.Duration's overflow: 100 years.
const maxAge = 100 * 365 * 24 * time.Hour

// ParseAge reads an age for prune: a number of days ("90d"), weeks ("2w"),
// or a Go duration ("36h", "90m").
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseUint(n, 10, 32)
			if err != nil || time.Duration(v) > maxAge/unit {
				break
			}
			return time.Duration(v) * unit, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err == nil && d > maxAge {
		err = fmt.Errorf("too long")
	}
	if err != nil || d < 0 {
		return 0, fmt.Errorf("age %q: want days (90d), weeks (2w) or a duration (36h)", s)
	}
	return d, nil
}
