package jsonmerge

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrInvalidClock is returned by ParseClock for text that is not a clock in
// its canonical form.
var ErrInvalidClock = errors.New("invalid clock")

// maxAgentLen bounds the agent id carried in a clock so a trailer stays one
// short line.
const maxAgentLen = 256

// Clock is a hybrid logical clock (Kulkarni et al., 2014): a physical wall
// time that never runs backwards, a logical counter that orders events within
// one wall tick, and the id of the agent that wrote, which makes the order
// total. It travels in a commit trailer as String's text.
type Clock struct {
	Wall    int64 // unix nanoseconds
	Logical uint32
	Agent   string
}

// Compare orders clocks by wall time, then logical counter, then agent id in
// byte order. It returns -1, 0 or +1.
func (c Clock) Compare(o Clock) int {
	switch {
	case c.Wall < o.Wall:
		return -1
	case c.Wall > o.Wall:
		return 1
	case c.Logical < o.Logical:
		return -1
	case c.Logical > o.Logical:
		return 1
	}
	return strings.Compare(c.Agent, o.Agent)
}

// IsZero reports whether c is the zero clock (no clock known).
func (c Clock) IsZero() bool { return c == Clock{} }

// String renders the clock as WALL.LOGICAL@AGENT, e.g.
// 1732240000123456789.3@agent-7: decimal, no leading zeros. The agent id is
// everything after the first '@', so it may itself contain '@'.
func (c Clock) String() string {
	b := make([]byte, 0, 32+len(c.Agent))
	b = strconv.AppendInt(b, c.Wall, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(c.Logical), 10)
	b = append(b, '@')
	return string(append(b, c.Agent...))
}

// ParseClock reads the text String writes and nothing else: every clock has
// exactly one spelling, so a trailer can be compared as text and round-trips
// byte for byte. The agent id may be empty; it must be valid UTF-8 without
// spaces or control characters and at most 256 bytes.
func ParseClock(s string) (Clock, error) {
	at := strings.IndexByte(s, '@')
	if at < 0 {
		return Clock{}, fmt.Errorf("%w: %q: want WALL.LOGICAL@AGENT", ErrInvalidClock, s)
	}
	stamp, agent := s[:at], s[at+1:]
	dot := strings.IndexByte(stamp, '.')
	if dot < 0 {
		return Clock{}, fmt.Errorf("%w: %q: want WALL.LOGICAL@AGENT", ErrInvalidClock, s)
	}
	wallText, logicalText := stamp[:dot], stamp[dot+1:]
	digits := strings.TrimPrefix(wallText, "-")
	if !canonicalDigits(digits) || wallText == "-0" {
		return Clock{}, fmt.Errorf("%w: %q: bad wall time %q", ErrInvalidClock, s, wallText)
	}
	wall, err := strconv.ParseInt(wallText, 10, 64)
	if err != nil {
		return Clock{}, fmt.Errorf("%w: %q: wall time out of range", ErrInvalidClock, s)
	}
	if !canonicalDigits(logicalText) {
		return Clock{}, fmt.Errorf("%w: %q: bad logical counter %q", ErrInvalidClock, s, logicalText)
	}
	logical, err := strconv.ParseUint(logicalText, 10, 32)
	if err != nil {
		return Clock{}, fmt.Errorf("%w: %q: logical counter out of range", ErrInvalidClock, s)
	}
	if err := checkAgent(agent); err != nil {
		return Clock{}, fmt.Errorf("%w: %q: %v", ErrInvalidClock, s, err)
	}
	return Clock{Wall: wall, Logical: uint32(logical), Agent: agent}, nil
}

// canonicalDigits accepts a non-empty decimal without leading zeros.
func canonicalDigits(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func checkAgent(agent string) error {
	if len(agent) > maxAgentLen {
		return fmt.Errorf("agent id longer than %d bytes", maxAgentLen)
	}
	if !utf8.ValidString(agent) {
		return errors.New("agent id is not UTF-8")
	}
	for _, r := range agent {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("agent id holds %q", r)
		}
	}
	return nil
}

// Tick returns the clock for a local event (a commit) at wall time now: the
// wall part never goes back even when the system clock does, and two events
// in one wall tick differ in the logical counter.
func (c Clock) Tick(now int64) Clock {
	if now > c.Wall {
		return Clock{Wall: now, Agent: c.Agent}
	}
	return c.next(c.Logical)
}

// Observe returns the clock after receiving remote (a merged or fetched
// commit) at wall time now. The result is later than both c and remote, so
// whatever this agent writes next is ordered after everything it has seen.
func (c Clock) Observe(remote Clock, now int64) Clock {
	wall := max(c.Wall, remote.Wall, now)
	switch {
	case wall == c.Wall && wall == remote.Wall:
		return c.next(max(c.Logical, remote.Logical))
	case wall == c.Wall:
		return c.next(c.Logical)
	case wall == remote.Wall:
		return Clock{Wall: wall, Logical: remote.Logical, Agent: c.Agent}.next(remote.Logical)
	}
	return Clock{Wall: wall, Agent: c.Agent}
}

// next returns c's wall with logical+1. A counter that would overflow moves
// the wall one nanosecond on instead, which keeps the order strict; only at
// the very end of int64 time does the clock stop advancing.
func (c Clock) next(logical uint32) Clock {
	if logical < math.MaxUint32 {
		return Clock{Wall: c.Wall, Logical: logical + 1, Agent: c.Agent}
	}
	if c.Wall == math.MaxInt64 {
		return Clock{Wall: c.Wall, Logical: logical, Agent: c.Agent}
	}
	return Clock{Wall: c.Wall + 1, Agent: c.Agent}
}
