package store

import "strings"

// Trailers of a commit that emits an event (package event writes them;
// log and watch filter on them, so that finding a type's events reads
// commits, not trees).
const (
	// TrailerEvent is the type of an event the commit records: one
	// trailer an event.
	TrailerEvent = "Event"
	// TrailerEventID is the id of that event.
	TrailerEventID = "Event-Id"
	// TrailerEventTarget is the agent the event is for, if any.
	TrailerEventTarget = "Event-Target"
)

// EventMatches reports whether an event of type typ is one pattern asks
// for: the type itself, or, for a pattern ending in ".*", any type under
// it ("task.*" is task.created, task.completed, …); "*" is every type.
func EventMatches(pattern, typ string) bool {
	if pattern == "*" {
		return typ != ""
	}
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok && strings.HasSuffix(prefix, ".") {
		return strings.HasPrefix(typ, prefix)
	}
	return pattern == typ
}

// hasEvent reports whether m emitted an event that pattern matches.
func hasEvent(m *Mutation, pattern string) bool {
	for _, t := range m.Trailers {
		if strings.EqualFold(t.Key, TrailerEvent) && EventMatches(pattern, t.Value) {
			return true
		}
	}
	return false
}
