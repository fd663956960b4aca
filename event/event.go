package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Dir is the directory of events in the store's tree.
const Dir = "events"

// PrefixEvent is the prefix of an event's id (evt-1a2b3c4d).
const PrefixEvent = "evt"

// ErrInvalid: a malformed event type, agent, payload or event file.
var ErrInvalid = errors.New("invalid event")

// Types the store emits on its own (lease contention, expiry and forced
// release), in the specification's lock family.
const (
	TypeLockContention   = "lock.contention"
	TypeLockExpired      = "lock.expired"
	TypeLockForceRelease = "lock.force_released"
)

// Limits of an event's fields.
const (
	MaxTypeLen  = 128
	MaxAgentLen = 128
)

// Event is one event of the bus: the specification's fields. Source is
// the agent that emitted it (the author of its commit), Target the agent
// it is for ("" = anyone), Correlation ties the events of one task or
// run together.
type Event struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	Source      string          `json:"source"`
	Target      string          `json:"target,omitempty"`
	Correlation string          `json:"correlation_id,omitempty"`
	Time        time.Time       `json:"time"`
	Payload     json.RawMessage `json:"payload"`
}

// CheckType refuses a type that is not one or more names joined by dots
// (task.created, handoff.requested, lock.contention): each name letters,
// digits, '_' and '-'.
func CheckType(typ string) error {
	if typ == "" {
		return errkind.Errorf(ErrInvalid, "an event needs a type (task.created, handoff.requested, …)")
	}
	if len(typ) > MaxTypeLen {
		return errkind.Errorf(ErrInvalid, "event type %.40q…: %d bytes, at most %d", typ, len(typ), MaxTypeLen)
	}
	for _, seg := range strings.Split(typ, ".") {
		if seg == "" {
			return errkind.Errorf(ErrInvalid, "event type %q: an empty name between dots", typ)
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return errkind.Errorf(ErrInvalid, "event type %q: %q is not allowed (names of letters, digits, '_' and '-', joined by dots)", typ, r)
			}
		}
	}
	return nil
}

// CheckPattern refuses a type filter that is neither a type, a type
// family ("task.*") nor "*".
func CheckPattern(p string) error {
	if p == "*" {
		return nil
	}
	return CheckType(strings.TrimSuffix(p, ".*"))
}

// CheckAgent refuses an agent id an event cannot name: empty, too long,
// not UTF-8, or holding a control character or <, > (which git
// identities cannot hold).
func CheckAgent(agent string) error {
	if agent == "" {
		return errkind.Errorf(ErrInvalid, "an event's agent is empty")
	}
	if len(agent) > MaxAgentLen {
		return errkind.Errorf(ErrInvalid, "agent %.40q…: %d bytes, at most %d", agent, len(agent), MaxAgentLen)
	}
	if !utf8.ValidString(agent) {
		return errkind.Errorf(ErrInvalid, "agent %q is not UTF-8", agent)
	}
	for _, r := range agent {
		if r < 0x20 || r == 0x7f || r == '<' || r == '>' {
			return errkind.Errorf(ErrInvalid, "agent %q holds %q", agent, r)
		}
	}
	return nil
}

// AgentDir is the directory name of agent's events: the id itself when it
// is made of letters, digits, '.', '_' and '-' (not starting with '.'),
// each other byte written %XX otherwise, so that every agent has one
// directory, no two share one, and every name is one git accepts.
func AgentDir(agent string) string {
	var b strings.Builder
	for i := 0; i < len(agent); i++ {
		c := agent[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// timeLayout names an event's file within its day: the time of day to
// the nanosecond, so that a day's files sort in time order.
const timeLayout = "150405.000000000"

// File is the event's file in the store.
func (e *Event) File() string {
	t := e.Time.UTC()
	return Dir + "/" + AgentDir(e.Source) + "/" + t.Format(time.DateOnly) + "/" + t.Format(timeLayout) + "-" + e.ID + ".json"
}

// Input is what an emitter says of an event; the store adds its id,
// source and time.
type Input struct {
	Type        string
	Target      string
	Correlation string
	// Payload is JSON ("" or nil: null).
	Payload []byte
}

// New makes the event source emits at now.
func New(in Input, id, source string, now time.Time) (*Event, error) {
	if err := CheckType(in.Type); err != nil {
		return nil, err
	}
	if err := CheckAgent(source); err != nil {
		return nil, err
	}
	if in.Target != "" {
		if err := CheckAgent(in.Target); err != nil {
			return nil, fmt.Errorf("target: %w", err)
		}
	}
	if strings.ContainsAny(in.Correlation, "\r\n") {
		return nil, errkind.Errorf(ErrInvalid, "a correlation id is one line")
	}
	payload := json.RawMessage("null")
	if len(bytes.TrimSpace(in.Payload)) > 0 {
		p, err := objects.Canonical(in.Payload)
		if err != nil {
			return nil, errkind.Errorf(ErrInvalid, "event %s: payload: %v", in.Type, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, p); err != nil {
			return nil, errkind.Errorf(ErrInvalid, "event %s: payload: %v", in.Type, err)
		}
		payload = compact.Bytes()
	}
	return &Event{ID: id, Type: in.Type, Source: source, Target: in.Target, Correlation: in.Correlation,
		Time: now.UTC(), Payload: payload}, nil
}

// Encode renders the event as the store keeps it: canonical JSON.
func (e *Event) Encode() ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return objects.Canonical(b)
}

// Decode reads the event in file, which must be the file its fields name.
func Decode(file string, data []byte) (*Event, error) {
	var e Event
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, errkind.Errorf(ErrInvalid, "%s is not an event: %v", file, err)
	}
	if dec.More() {
		return nil, errkind.Errorf(ErrInvalid, "%s is not an event: more than one JSON value", file)
	}
	if !verbiage.ValidID(PrefixEvent, e.ID) {
		return nil, errkind.Errorf(ErrInvalid, "%s is not an event: id %q is not evt-<8 hex digits>", file, e.ID)
	}
	if err := CheckType(e.Type); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := CheckAgent(e.Source); err != nil {
		return nil, fmt.Errorf("%s: source: %w", file, err)
	}
	if e.Target != "" {
		if err := CheckAgent(e.Target); err != nil {
			return nil, fmt.Errorf("%s: target: %w", file, err)
		}
	}
	if strings.ContainsAny(e.Correlation, "\r\n") {
		return nil, errkind.Errorf(ErrInvalid, "%s: a correlation id is one line", file)
	}
	if e.Time.IsZero() || e.Time.Year() < 1970 || e.Time.Year() > 9999 {
		return nil, errkind.Errorf(ErrInvalid, "%s: the event has no time", file)
	}
	if e.Payload == nil {
		e.Payload = json.RawMessage("null")
	}
	e.Time = e.Time.UTC()
	if e.File() != file {
		return nil, errkind.Errorf(ErrInvalid, "%s holds event %s of %s at %s, whose file is %s", file, e.ID, e.Source, e.Time.Format(time.RFC3339Nano), e.File())
	}
	var compact bytes.Buffer
	if json.Compact(&compact, e.Payload) == nil {
		e.Payload = json.RawMessage(compact.Bytes())
	}
	return &e, nil
}

// Filter says which events List and Replay give.
type Filter struct {
	// Types keeps events of these types or families ("task.*"; none:
	// every type).
	Types []string
	// Source and Target keep one agent's events, or those for one agent.
	Source, Target string
	// Correlation keeps one task's or run's events.
	Correlation string
	// Since and Until bound the event's time (zero: unbounded; Until is
	// exclusive).
	Since, Until time.Time
	// Limit stops after this many events (0: all).
	Limit int
}

// Validate refuses a filter that asks for no event there could be.
func (f *Filter) Validate() error {
	for _, t := range f.Types {
		if err := CheckPattern(t); err != nil {
			return err
		}
	}
	if f.Limit < 0 {
		return errkind.Errorf(ErrInvalid, "a limit of %d events", f.Limit)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return errkind.Errorf(ErrInvalid, "the time range is empty: until %s is not after since %s", f.Until.Format(time.RFC3339), f.Since.Format(time.RFC3339))
	}
	return nil
}

// Match reports whether e passes the filter.
func (f *Filter) Match(e *Event) bool {
	if len(f.Types) > 0 {
		ok := false
		for _, t := range f.Types {
			if typeMatches(t, e.Type) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	switch {
	case f.Source != "" && e.Source != f.Source,
		f.Target != "" && e.Target != f.Target,
		f.Correlation != "" && e.Correlation != f.Correlation,
		!f.Since.IsZero() && e.Time.Before(f.Since),
		!f.Until.IsZero() && !e.Time.Before(f.Until):
		return false
	}
	return true
}

// typeMatches is store.EventMatches, here so that the rules know no store.
func typeMatches(pattern, typ string) bool {
	if pattern == "*" {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok && strings.HasSuffix(prefix, ".") {
		return strings.HasPrefix(typ, prefix)
	}
	return pattern == typ
}

// Less orders events by time, then id: replay order.
func Less(a, b *Event) int {
	if c := a.Time.Compare(b.Time); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}
