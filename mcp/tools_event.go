package mcp

import (
	"context"
	"fmt"
	"time"

	"github.com/aiwg/aiwg-state/event"
)

type EventEmitIn struct {
	Type  string `json:"type" jsonschema:"the event's type: names joined by dots, e.g. task.created, handoff.requested"`
	To    string `json:"to,omitempty" jsonschema:"the agent the event is for (default: anyone)"`
	Value any    `json:"value,omitempty" jsonschema:"the event's payload, any JSON value (default: null)"`
	WriteArgs
}

type EventLsIn struct {
	Types       []string `json:"types,omitempty" jsonschema:"only events of these types or families (task.*)"`
	Source      string   `json:"source,omitempty" jsonschema:"only events this agent emitted"`
	To          string   `json:"to,omitempty" jsonschema:"only events for this agent"`
	Correlation string   `json:"correlation,omitempty" jsonschema:"only events of this correlation id"`
	Since       string   `json:"since,omitempty" jsonschema:"only events at or after this RFC 3339 time"`
	Until       string   `json:"until,omitempty" jsonschema:"only events before this RFC 3339 time"`
	N           int      `json:"n,omitempty" jsonschema:"at most this many events, the oldest (default: all)"`
	ReadArgs
}

// addEventTools adds the event bus: emit, and a revision's events.
func (s *Server) addEventTools() {
	add(s, "event_emit", "Emit an event on the store's event bus (one commit, from you): type, optional target agent (to), payload (value), correlation. Returns {event, mutation}.", writes,
		func(ctx context.Context, c *call, in EventEmitIn) (any, string, error) {
			var payload []byte
			if c.has("value") {
				var err error
				if payload, err = jsonValue("value", in.Value, true); err != nil {
					return nil, "", err
				}
			}
			wo, err := in.options(c)
			if err != nil {
				return nil, "", err
			}
			ev, m, err := s.st.Events().Emit(ctx, event.Input{Type: in.Type, Target: in.To, Correlation: wo.Correlation, Payload: payload}, wo)
			if err != nil {
				return nil, "", err
			}
			return map[string]any{"event": ev, "mutation": m}, fmt.Sprintf("%s %s, commit %s", ev.Type, ev.ID, short(m.Commit)), nil
		})
	add(s, "event_ls", "The events a revision holds, oldest first, by type, source, target, correlation and time: a polling read, no commit. Returns {events: [...]}.", readOnly,
		func(ctx context.Context, c *call, in EventLsIn) (any, string, error) {
			if err := s.mayRead(ctx, c, event.Dir+"/"); err != nil {
				return nil, "", err
			}
			f := event.Filter{Types: in.Types, Source: in.Source, Target: in.To, Correlation: in.Correlation, Limit: in.N}
			for _, t := range []struct {
				name, v string
				to      *time.Time
			}{{"since", in.Since, &f.Since}, {"until", in.Until, &f.Until}} {
				if t.v == "" {
					continue
				}
				v, err := time.Parse(time.RFC3339, t.v)
				if err != nil {
					return nil, "", usagef("%s: want an RFC 3339 time like 2026-11-22T10:00:00Z, got %q", t.name, t.v)
				}
				*t.to = v
			}
			es, err := s.st.Events().List(ctx, f, in.options())
			if err != nil {
				return nil, "", err
			}
			return list("events", es), fmt.Sprintf("%d events", len(es)), nil
		})
}
