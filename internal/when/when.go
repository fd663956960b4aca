// Package when reads the times people type on a command line: a date
// (2026-11-01), a date and time as log prints it (2026-11-01 10:00:00,
// UTC), an RFC 3339 time, "now", or an age meaning that long ago (90s,
// 15m, 2h, 1d, 3w, 1h30m, "2h ago"). Every command that takes a time
// (--since, --until, --at) reads it here, so each reads the same forms.
package when

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrTime is the error of every time that cannot be read.
var ErrTime = errors.New("not a time")

// Forms names the accepted forms, for error messages and help.
const Forms = "a date (2026-11-01), an RFC 3339 time (2026-11-01T10:00:00Z) or an age (90m, 2h, 1d, 3w)"

// maxAge bounds an age: a hundred years ago is before any store, and the
// bound keeps the arithmetic far from overflow.
const maxAge = 100 * 365 * 24 * time.Hour

// Parse reads s as a time; an age counts back from now. A date or date
// and time without a zone is UTC, as the CLI prints times.
func Parse(s string, now time.Time) (time.Time, error) {
	v := strings.TrimSpace(s)
	if v == "" {
		return time.Time{}, fmt.Errorf("%w: empty", ErrTime)
	}
	if v == "now" {
		return now, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	d, err := ParseAge(strings.TrimSpace(strings.TrimSuffix(v, " ago")))
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q: want %s", ErrTime, s, Forms)
	}
	return now.Add(-d), nil
}

// IsAge reports whether s is an age (2h, 1d) rather than a point in time.
func IsAge(s string) bool {
	_, err := ParseAge(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), " ago")))
	return err == nil
}

// units are an age's units, longest first among those sharing a letter.
var units = []struct {
	suffix string
	d      time.Duration
}{
	{"w", 7 * 24 * time.Hour},
	{"d", 24 * time.Hour},
	{"h", time.Hour},
	{"m", time.Minute},
	{"s", time.Second},
}

// ParseAge reads a length of time: one or more whole numbers each with a
// unit (w, d, h, m, s), as 3w, 1d12h or 90s; at most a hundred years.
func ParseAge(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("%w: empty age", ErrTime)
	}
	var total time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i > 12 || i == len(rest) {
			return 0, fmt.Errorf("%w: age %q", ErrTime, s)
		}
		n, err := strconv.ParseInt(rest[:i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: age %q", ErrTime, s)
		}
		var unit time.Duration
		for _, u := range units {
			if rest[i:i+1] == u.suffix {
				unit = u.d
				break
			}
		}
		if unit == 0 || time.Duration(n) > maxAge/unit {
			return 0, fmt.Errorf("%w: age %q", ErrTime, s)
		}
		total += time.Duration(n) * unit
		if total > maxAge {
			return 0, fmt.Errorf("%w: age %q is over a hundred years", ErrTime, s)
		}
		rest = rest[i+1:]
	}
	return total, nil
}
