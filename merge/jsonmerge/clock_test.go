package jsonmerge

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestClockCompare(t *testing.T) {
	tests := []struct {
		a, b Clock
		want int
	}{
		{Clock{Wall: 1}, Clock{Wall: 2}, -1},
		{Clock{Wall: 2, Logical: 0}, Clock{Wall: 1, Logical: 9}, 1},
		{Clock{Wall: 2, Logical: 1}, Clock{Wall: 2, Logical: 2}, -1},
		{Clock{Wall: 2, Logical: 2, Agent: "b"}, Clock{Wall: 2, Logical: 2, Agent: "a"}, 1},
		{Clock{Wall: 2, Logical: 2, Agent: "a"}, Clock{Wall: 2, Logical: 2, Agent: "a"}, 0},
		{Clock{Wall: -5}, Clock{}, -1},
	}
	for _, tc := range tests {
		if got := tc.a.Compare(tc.b); got != tc.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := tc.b.Compare(tc.a); got != -tc.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestClockText(t *testing.T) {
	good := []struct {
		text string
		c    Clock
	}{
		{"1732240000123456789.3@agent-id", Clock{1732240000123456789, 3, "agent-id"}},
		{"0.0@", Clock{}},
		{"-12.0@a", Clock{-12, 0, "a"}},
		{"9223372036854775807.4294967295@bot@host", Clock{math.MaxInt64, math.MaxUint32, "bot@host"}},
		{"5.1@agent/ü", Clock{5, 1, "agent/ü"}},
	}
	for _, tc := range good {
		got, err := ParseClock(tc.text)
		if err != nil || got != tc.c {
			t.Errorf("ParseClock(%q) = %v, %v; want %v", tc.text, got, err, tc.c)
		}
		if s := tc.c.String(); s != tc.text {
			t.Errorf("%#v.String() = %q, want %q", tc.c, s, tc.text)
		}
	}
	bad := []string{
		"", "1", "1.2", "1@a", ".1@a", "1.@a", "01.1@a", "1.01@a", "-0.1@a", "+1.1@a",
		"1.4294967296@a", "9223372036854775808.0@a", "1.1@a b", "1.1@a\n", "1.1@\xff", "1 .1@a", "1.-1@a",
		"1.1@" + string(make([]byte, 300)),
	}
	for _, s := range bad {
		if c, err := ParseClock(s); !errors.Is(err, ErrInvalidClock) {
			t.Errorf("ParseClock(%q) = %v, %v; want ErrInvalidClock", s, c, err)
		}
	}
}

func TestClockTick(t *testing.T) {
	tests := []struct {
		name string
		c    Clock
		now  int64
		want Clock
	}{
		{"wall moves on", Clock{100, 7, "a"}, 200, Clock{200, 0, "a"}},
		{"same wall tick counts", Clock{100, 7, "a"}, 100, Clock{100, 8, "a"}},
		{"system clock went back", Clock{100, 7, "a"}, 50, Clock{100, 8, "a"}},
		{"counter overflow moves the wall", Clock{100, math.MaxUint32, "a"}, 50, Clock{101, 0, "a"}},
	}
	for _, tc := range tests {
		if got := tc.c.Tick(tc.now); got != tc.want {
			t.Errorf("%s: Tick = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestClockObserve(t *testing.T) {
	tests := []struct {
		name      string
		c, remote Clock
		now       int64
		want      Clock
	}{
		{"local wall time is newest", Clock{10, 3, "a"}, Clock{20, 5, "b"}, 30, Clock{30, 0, "a"}},
		{"remote is ahead", Clock{10, 3, "a"}, Clock{20, 5, "b"}, 15, Clock{20, 6, "a"}},
		{"we are ahead", Clock{20, 3, "a"}, Clock{10, 5, "b"}, 15, Clock{20, 4, "a"}},
		{"same wall: larger counter + 1", Clock{20, 3, "a"}, Clock{20, 5, "b"}, 15, Clock{20, 6, "a"}},
		{"remote counter overflow", Clock{1, 0, "a"}, Clock{20, math.MaxUint32, "b"}, 15, Clock{21, 0, "a"}},
	}
	for _, tc := range tests {
		if got := tc.c.Observe(tc.remote, tc.now); got != tc.want {
			t.Errorf("%s: Observe = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestClockMonotonic checks the HLC promise on random histories: a stamp is
// always later than what the agent had and than what it observed, and its
// wall part never runs behind the physical clock.
func TestClockMonotonic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	later := func(a, b Clock) bool { // a after b, ignoring the agent
		return a.Wall > b.Wall || (a.Wall == b.Wall && a.Logical > b.Logical)
	}
	wall := func() int64 { return int64(r.IntN(50)) }
	logical := func() uint32 {
		if r.IntN(4) == 0 {
			return math.MaxUint32 - uint32(r.IntN(2))
		}
		return uint32(r.IntN(5))
	}
	for range 10000 {
		c := Clock{wall(), logical(), "a"}
		remote := Clock{wall(), logical(), "b"}
		now := wall()
		if got := c.Tick(now); !later(got, c) || got.Wall < now || got.Agent != "a" {
			t.Fatalf("%v.Tick(%d) = %v", c, now, got)
		}
		if got := c.Observe(remote, now); !later(got, c) || !later(got, remote) || got.Wall < now || got.Agent != "a" {
			t.Fatalf("%v.Observe(%v, %d) = %v", c, remote, now, got)
		}
	}
}

func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"1732240000123456789.3@agent-id", "0.0@", "-1.0@x", "1.1@a@b", "01.1@a", "1.1@a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseClock(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidClock) {
				t.Fatalf("ParseClock(%q): error %v does not wrap ErrInvalidClock", s, err)
			}
			return
		}
		// One spelling per clock: the text round-trips byte for byte.
		if got := c.String(); got != s {
			t.Fatalf("ParseClock(%q).String() = %q", s, got)
		}
		if again, err := ParseClock(c.String()); err != nil || again != c {
			t.Fatalf("round trip of %q: %v, %v", s, again, err)
		}
	})
}
