package statedoc

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// The verbs below are pure: each takes a resolved document, returns a new
// one (the input is not modified) and the key paths it changed, for the
// commit's Path trailers. Titles and goal arguments are normalized to
// verbiage keys (verbiage.ErrInvalidKey when they cannot be); a missing
// goal or sub-goal is objects.ErrNotFound, a duplicate ErrExists.

// GoalPath is the key path of a goal, or of a sub-goal when sub is not "".
func GoalPath(goal, sub string) verbiage.Path {
	p := verbiage.Path{{Key: KeyGoals}, {Key: goal}}
	if sub != "" {
		p = append(p, verbiage.Segment{Key: KeySubGoals}, verbiage.Segment{Key: sub})
	}
	return p
}

// NewGoal is a goal as goal create writes it.
func NewGoal(key, summary string) map[string]any {
	return map[string]any{
		KeyTitle: key, KeySummary: summary, KeyStatus: "open",
		KeyNotes: []any{}, KeySubGoals: map[string]any{},
	}
}

// NewSubGoal is a sub-goal as goal sub create writes it.
func NewSubGoal(key, summary string) map[string]any {
	return map[string]any{
		KeyTitle: key, KeySummary: summary, KeyStatus: "open",
		KeyNotes: []any{}, KeyEvents: []any{}, KeyRequestNotes: []any{},
		KeyInFlight: false, KeyLastRequest: nil, KeyLastSeenIdx: jsonInt(-1),
	}
}

// CreateGoal adds the goal titled title (normalized to its key).
func CreateGoal(doc any, title, summary string) (any, []verbiage.Path, error) {
	key, err := verbiage.NormalizeKey(title)
	if err != nil {
		return nil, nil, err
	}
	p := GoalPath(key, "")
	if _, err := objects.Get(doc, p); err == nil {
		return nil, nil, fmt.Errorf("%w: goal %s", ErrExists, key)
	}
	out, err := objects.Set(doc, p, NewGoal(key, summary))
	if err != nil {
		return nil, nil, err
	}
	return out, []verbiage.Path{p}, nil
}

// CreateSubGoal adds the sub-goal titled title under goal.
func CreateSubGoal(doc any, goal, title, summary string) (any, []verbiage.Path, error) {
	gkey, _, err := findGoal(doc, goal)
	if err != nil {
		return nil, nil, err
	}
	key, err := verbiage.NormalizeKey(title)
	if err != nil {
		return nil, nil, err
	}
	p := GoalPath(gkey, key)
	if _, err := objects.Get(doc, p); err == nil {
		return nil, nil, fmt.Errorf("%w: sub-goal %s of goal %s", ErrExists, key, gkey)
	}
	out, err := objects.Set(doc, p, NewSubGoal(key, summary))
	if err != nil {
		return nil, nil, err
	}
	return out, []verbiage.Path{p}, nil
}

// findGoal normalizes goal and returns its key and object.
func findGoal(doc any, goal string) (string, map[string]any, error) {
	key, err := verbiage.NormalizeKey(goal)
	if err != nil {
		return "", nil, err
	}
	v, err := objects.Get(doc, GoalPath(key, ""))
	if err != nil {
		return "", nil, fmt.Errorf("%w: no goal %s", objects.ErrNotFound, key)
	}
	g, ok := v.(map[string]any)
	if !ok {
		return "", nil, fmt.Errorf("%w: goal %s is %s", ErrInvalidState, key, objects.KindOf(v))
	}
	return key, g, nil
}

// findTarget resolves a goal, or a sub-goal of it when sub is not "", to
// its path and object.
func findTarget(doc any, goal, sub string) (verbiage.Path, map[string]any, error) {
	gkey, g, err := findGoal(doc, goal)
	if err != nil {
		return nil, nil, err
	}
	if sub == "" {
		return GoalPath(gkey, ""), g, nil
	}
	skey, err := verbiage.NormalizeKey(sub)
	if err != nil {
		return nil, nil, err
	}
	subs, _ := g[KeySubGoals].(map[string]any)
	v, ok := subs[skey]
	if !ok {
		return nil, nil, fmt.Errorf("%w: no sub-goal %s in goal %s", objects.ErrNotFound, skey, gkey)
	}
	s, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("%w: sub-goal %s of %s is %s", ErrInvalidState, skey, gkey, objects.KindOf(v))
	}
	return GoalPath(gkey, skey), s, nil
}

// SetStatus sets the STATUS of a goal, or of a sub-goal when sub is not "".
func SetStatus(doc any, goal, sub, status string) (any, []verbiage.Path, error) {
	p, _, err := findTarget(doc, goal, sub)
	if err != nil {
		return nil, nil, err
	}
	return setAll(doc, field{p.Child(KeyStatus), status})
}

// AddNote appends to the NOTES of a goal, or of a sub-goal.
func AddNote(doc any, goal, sub, note string) (any, []verbiage.Path, error) {
	p, obj, err := findTarget(doc, goal, sub)
	if err != nil {
		return nil, nil, err
	}
	return appendTo(doc, obj, p, KeyNotes, note)
}

// appendTo appends v to the array at key of obj (at p), creating it.
func appendTo(doc any, obj map[string]any, p verbiage.Path, key string, v any) (any, []verbiage.Path, error) {
	arr, _ := obj[key].([]any)
	next := append(slices.Clip(arr), v)
	return setAll(doc, field{p.Child(key), next})
}

type field struct {
	at verbiage.Path
	v  any
}

func setAll(doc any, fs ...field) (any, []verbiage.Path, error) {
	var paths []verbiage.Path
	for _, f := range fs {
		var err error
		if doc, err = objects.Set(doc, f.at, f.v); err != nil {
			return nil, nil, err
		}
		paths = append(paths, f.at)
	}
	return doc, paths, nil
}

// Event is an event to append to a sub-goal.
type Event struct {
	ID, Type, Body string
	CreatedAt      time.Time
}

// AddEvent appends an unseen event to the sub-goal's EVENTS. EVENTS is
// append-only: nothing here rewrites an event but Latest marking it SEEN.
func AddEvent(doc any, goal, sub string, ev Event) (any, []verbiage.Path, error) {
	p, s, err := findTarget(doc, goal, sub)
	if err != nil {
		return nil, nil, err
	}
	if sub == "" {
		return nil, nil, fmt.Errorf("%w: events belong to a sub-goal", verbiage.ErrInvalidPath)
	}
	e := map[string]any{
		KeyID: nullable(ev.ID), KeyType: nullable(ev.Type), KeyBody: nullable(ev.Body),
		KeySeen: false, KeyCreatedAt: nil,
	}
	if !ev.CreatedAt.IsZero() {
		e[KeyCreatedAt] = ev.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	return appendTo(doc, s, p, KeyEvents, e)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Request records a request to a sub-goal's agent: IN-FLIGHT and
// LAST-REQUEST. A sub-goal takes one request at a time: a second one while
// the first is in flight is ErrInFlight.
func Request(doc any, goal, sub, text string) (any, []verbiage.Path, error) {
	p, s, err := findTarget(doc, goal, sub)
	if err != nil {
		return nil, nil, err
	}
	if sub == "" {
		return nil, nil, fmt.Errorf("%w: requests go to a sub-goal", verbiage.ErrInvalidPath)
	}
	if s[KeyInFlight] == true {
		last, _ := s[KeyLastRequest].(string)
		return nil, nil, fmt.Errorf("%w: %s/%s is still working on %q", ErrInFlight, p[1].Key, p[3].Key, last)
	}
	return setAll(doc, field{p.Child(KeyInFlight), true}, field{p.Child(KeyLastRequest), text})
}

// FinishRequest clears IN-FLIGHT, appending note to REQUEST-NOTES when it
// is not empty. Finishing when nothing is in flight changes nothing.
func FinishRequest(doc any, goal, sub, note string) (any, []verbiage.Path, error) {
	p, s, err := findTarget(doc, goal, sub)
	if err != nil {
		return nil, nil, err
	}
	if sub == "" {
		return nil, nil, fmt.Errorf("%w: requests go to a sub-goal", verbiage.ErrInvalidPath)
	}
	if s[KeyInFlight] != true {
		return doc, nil, nil // a retried --done must not add its note twice
	}
	out, paths, err := setAll(doc, field{p.Child(KeyInFlight), false})
	if err != nil || note == "" {
		return out, paths, err
	}
	out, more, err := appendTo(out, s, p, KeyRequestNotes, note)
	return out, append(paths, more...), err
}

// Seen is the event Latest marked.
type Seen struct {
	Goal      string `json:"goal"`
	SubGoal   string `json:"sub_goal"`
	Index     int    `json:"index"`
	ID        any    `json:"id"`
	Type      any    `json:"type"`
	Body      any    `json:"body"`
	CreatedAt any    `json:"created_at"`
}

// Activity is one sub-goal in the roll-up.
type Activity struct {
	Goal        string `json:"goal"`
	SubGoal     string `json:"sub_goal"`
	Status      any    `json:"status"`
	LastRequest any    `json:"last_request,omitempty"`
}

// Briefing is what Latest reports: the event it marked and how many unseen
// remain, or, when none remained, the roll-up of sub-goals that are
// thinking (a request in flight) and ready.
type Briefing struct {
	Event     *Seen      `json:"event,omitempty"`
	Remaining int        `json:"remaining"`
	Thinking  []Activity `json:"thinking,omitempty"`
	Ready     []Activity `json:"ready,omitempty"`
}

// Latest finds the first unseen event across sub-goals (goals and
// sub-goals in key order, events in order), marks it SEEN and raises the
// sub-goal's LAST-SEEN-IDX to its index. When no event is unseen the
// document is returned unchanged (no paths) with the roll-up.
func Latest(doc any) (any, []verbiage.Path, *Briefing, error) {
	b := &Briefing{}
	var hit *Seen
	eachSubGoal(doc, func(g, s string, sg map[string]any) {
		events, _ := sg[KeyEvents].([]any)
		for i, e := range events {
			em, ok := e.(map[string]any)
			if !ok || em[KeySeen] == true {
				continue
			}
			if hit == nil {
				hit = &Seen{Goal: g, SubGoal: s, Index: i, ID: em[KeyID], Type: em[KeyType], Body: em[KeyBody], CreatedAt: em[KeyCreatedAt]}
			} else {
				b.Remaining++
			}
		}
	})
	if hit == nil {
		eachSubGoal(doc, func(g, s string, sg map[string]any) {
			a := Activity{Goal: g, SubGoal: s, Status: sg[KeyStatus]}
			if sg[KeyInFlight] == true {
				a.LastRequest = sg[KeyLastRequest]
				b.Thinking = append(b.Thinking, a)
			} else {
				b.Ready = append(b.Ready, a)
			}
		})
		return doc, nil, b, nil
	}
	b.Event = hit
	p := GoalPath(hit.Goal, hit.SubGoal)
	sg, _ := objects.Get(doc, p)
	fs := []field{{p.Child(KeyEvents).Child(fmt.Sprint(hit.Index)).Child(KeySeen), true}}
	if last, ok := intOf(sg.(map[string]any)[KeyLastSeenIdx]); !ok || last < hit.Index {
		fs = append(fs, field{p.Child(KeyLastSeenIdx), jsonInt(hit.Index)})
	}
	out, paths, err := setAll(doc, fs...)
	if err != nil {
		return nil, nil, nil, err
	}
	return out, paths, b, nil
}

// eachSubGoal visits every sub-goal object in key order.
func eachSubGoal(doc any, fn func(goal, sub string, sg map[string]any)) {
	root, _ := doc.(map[string]any)
	goals, _ := root[KeyGoals].(map[string]any)
	for _, g := range slices.Sorted(maps.Keys(goals)) {
		gm, _ := goals[g].(map[string]any)
		subs, _ := gm[KeySubGoals].(map[string]any)
		for _, s := range slices.Sorted(maps.Keys(subs)) {
			if sm, ok := subs[s].(map[string]any); ok {
				fn(g, s, sm)
			}
		}
	}
}

// String is the human briefing.
func (b *Briefing) String() string {
	var sb strings.Builder
	if e := b.Event; e != nil {
		fmt.Fprintf(&sb, "%s / %s: event %d", e.Goal, e.SubGoal, e.Index)
		if t, ok := e.Type.(string); ok {
			fmt.Fprintf(&sb, " (%s)", t)
		}
		if at, ok := e.CreatedAt.(string); ok {
			fmt.Fprintf(&sb, " at %s", at)
		}
		sb.WriteString("\n")
		if body, ok := e.Body.(string); ok && body != "" {
			sb.WriteString(indentLines(body, "  "))
			sb.WriteString("\n")
		}
		switch b.Remaining {
		case 0:
			sb.WriteString("no unseen events remain\n")
		case 1:
			sb.WriteString("1 more unseen event\n")
		default:
			fmt.Fprintf(&sb, "%d more unseen events\n", b.Remaining)
		}
		return sb.String()
	}
	fmt.Fprintf(&sb, "no unseen events: %d thinking, %d ready\n", len(b.Thinking), len(b.Ready))
	for _, a := range b.Thinking {
		fmt.Fprintf(&sb, "  thinking  %s / %s", a.Goal, a.SubGoal)
		if r, ok := a.LastRequest.(string); ok {
			fmt.Fprintf(&sb, ": %s", firstLine(r))
		}
		sb.WriteString("\n")
	}
	for _, a := range b.Ready {
		fmt.Fprintf(&sb, "  ready     %s / %s", a.Goal, a.SubGoal)
		if st, ok := a.Status.(string); ok && st != "" {
			fmt.Fprintf(&sb, " [%s]", st)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func indentLines(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
