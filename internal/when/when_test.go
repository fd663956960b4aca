package when

import (
	"errors"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func TestParse(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-11-01":                now.AddDate(0, 0, -25).Add(-12 * time.Hour),
		"2026-11-01T10:00:00Z":      time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		"2026-11-01T12:00:00+02:00": time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		"2026-11-01 10:00:00":       time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		"2026-11-01T10:00":          time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		"2h":                        now.Add(-2 * time.Hour),
		"2h ago":                    now.Add(-2 * time.Hour),
		" 1d ":                      now.Add(-24 * time.Hour),
		"3w":                        now.Add(-21 * 24 * time.Hour),
		"90m":                       now.Add(-90 * time.Minute),
		"1d12h":                     now.Add(-36 * time.Hour),
		"0s":                        now,
		"now":                       now,
	} {
		got, err := Parse(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "-2h", "2", "h", "2x", "2026-13-01", "2026-11-01T25:00:00Z", "1.5h", "2h30", "101y", "999999999999999w", "5300w", "2 h"} {
		if got, err := Parse(in, now); !errors.Is(err, ErrTime) {
			t.Errorf("Parse(%q) = %v, %v; want ErrTime", in, got, err)
		}
	}
	if !IsAge("2h") || IsAge("2026-11-01") || IsAge("main") {
		t.Error("IsAge")
	}
}

// FuzzParse: any input is read or refused with ErrTime, never a panic;
// an age is never in the future nor over a hundred years back, and an
// RFC 3339 time reads back as itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"2026-11-01", "2026-11-01T10:00:00Z", "2h", "1d12h", "3w ago", "now", "99999999999w", "2026-11-01 10:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s, now)
		if err != nil {
			if !errors.Is(err, ErrTime) {
				t.Fatalf("Parse(%q): untyped error %v", s, err)
			}
			return
		}
		if IsAge(s) {
			if got.After(now) || now.Sub(got) > maxAge {
				t.Fatalf("Parse(%q) = %v: outside [now-100y, now]", s, got)
			}
		}
		if tt, err := time.Parse(time.RFC3339Nano, s); err == nil && !tt.Equal(got) {
			t.Fatalf("Parse(%q) = %v, RFC 3339 says %v", s, got, tt)
		}
	})
}
