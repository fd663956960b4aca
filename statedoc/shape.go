package statedoc

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// DefaultPath is the state document a store declares by default.
const DefaultPath = "state/state.json"

// Keys of the specification's shape.
const (
	KeyActiveProject = "ACTIVE-PROJECT"
	KeyGoals         = "GOALS"
	KeyItems         = "ITEMS"
	KeyGlobal        = "GLOBAL"
	KeyProjects      = "PROJECTS"
	KeyChats         = "CHATS"
	KeyMeta          = "META"
	KeyContent       = "CONTENT"
	KeyProjectID     = "PROJECT-ID"
	KeyChatID        = "CHAT-ID"
	KeyTitle         = "TITLE"
	KeySummary       = "SUMMARY"
	KeyStatus        = "STATUS"
	KeyNotes         = "NOTES"
	KeySubGoals      = "SUB-GOALS"
	KeyEvents        = "EVENTS"
	KeyRequestNotes  = "REQUEST-NOTES"
	KeyInFlight      = "IN-FLIGHT"
	KeyLastRequest   = "LAST-REQUEST"
	KeyLastSeenIdx   = "LAST-SEEN-IDX"
	KeyID            = "ID"
	KeyType          = "TYPE"
	KeyBody          = "BODY"
	KeySeen          = "SEEN"
	KeyCreatedAt     = "CREATED-AT"
)

// Default returns a new copy of the specification's default shape:
//
//	{"ACTIVE-PROJECT": {"TITLE": null, "PROJECT-ID": null},
//	 "GOALS": {},
//	 "ITEMS": {"GLOBAL": {"META": {}, "CONTENT": {}}, "PROJECTS": []}}
func Default() map[string]any {
	return map[string]any{
		KeyActiveProject: map[string]any{KeyTitle: nil, KeyProjectID: nil},
		KeyGoals:         map[string]any{},
		KeyItems:         map[string]any{KeyGlobal: itemsRoot(), KeyProjects: []any{}},
	}
}

func itemsRoot() map[string]any {
	return map[string]any{KeyMeta: map[string]any{}, KeyContent: map[string]any{}}
}

// DefaultStateDocument is the canonical JSON of Default, which init writes
// to state/state.json.
func DefaultStateDocument() []byte {
	b, err := objects.Encode(Default())
	if err != nil {
		panic(err) // a constant value always encodes
	}
	return b
}

// Validate checks a resolved document against the specification's shape. Keys the
// specification names must hold the types it gives them (strings may be null where
// the specification says "string|null"); other keys are allowed, so a document can
// grow without a schema change. Verbiage keys are checked by Load, not here.
func Validate(doc any) error {
	root, ok := doc.(map[string]any)
	if !ok {
		return shapeError(nil, "the document must be an object, not "+objects.KindOf(doc))
	}
	var v validator
	for _, k := range []string{KeyActiveProject, KeyGoals, KeyItems} {
		if _, ok := root[k]; !ok {
			return shapeError(nil, fmt.Sprintf("missing %s (the seed's shape has ACTIVE-PROJECT, GOALS and ITEMS)", k))
		}
	}
	at := verbiage.Path{}
	if ap, ok := v.object(root, KeyActiveProject, at); ok {
		v.nullableString(ap, KeyTitle, at.Child(KeyActiveProject))
		v.nullableString(ap, KeyProjectID, at.Child(KeyActiveProject))
	}
	if goals, ok := v.object(root, KeyGoals, at); ok {
		for _, g := range slices.Sorted(maps.Keys(goals)) {
			v.goal(goals, g, at.Child(KeyGoals))
		}
	}
	if items, ok := v.object(root, KeyItems, at); ok {
		ip := at.Child(KeyItems)
		if _, has := items[KeyGlobal]; has {
			v.items(items, KeyGlobal, ip)
		}
		if projects, ok := v.array(items, KeyProjects, ip); ok {
			for i := range projects {
				p, pp, ok := v.element(projects, i, ip.Child(KeyProjects))
				if !ok {
					continue
				}
				v.requiredString(p, KeyProjectID, pp)
				v.items(p, KeyItems, pp)
				if chats, ok := v.array(p, KeyChats, pp); ok {
					for j := range chats {
						c, cp, ok := v.element(chats, j, pp.Child(KeyChats))
						if ok {
							v.requiredString(c, KeyChatID, cp)
							v.items(c, KeyItems, cp)
						}
					}
				}
			}
		}
	}
	return v.err
}

type validator struct{ err error }

func shapeError(at verbiage.Path, why string) error {
	if len(at) == 0 {
		return fmt.Errorf("%w: %s", ErrInvalidState, why)
	}
	return fmt.Errorf("%w: %s: %s", ErrInvalidState, at.String(), why)
}

func (v *validator) fail(at verbiage.Path, why string) {
	if v.err == nil {
		v.err = shapeError(at, why)
	}
}

// object returns parent[k] when it is an object; absent is fine.
func (v *validator) object(parent map[string]any, k string, at verbiage.Path) (map[string]any, bool) {
	x, has := parent[k]
	if !has {
		return nil, false
	}
	m, ok := x.(map[string]any)
	if !ok {
		v.fail(at.Child(k), "must be an object, not "+objects.KindOf(x))
	}
	return m, ok
}

func (v *validator) array(parent map[string]any, k string, at verbiage.Path) ([]any, bool) {
	x, has := parent[k]
	if !has {
		return nil, false
	}
	a, ok := x.([]any)
	if !ok {
		v.fail(at.Child(k), "must be an array, not "+objects.KindOf(x))
	}
	return a, ok
}

func (v *validator) element(arr []any, i int, at verbiage.Path) (map[string]any, verbiage.Path, bool) {
	ep := at.Child(strconv.Itoa(i))
	m, ok := arr[i].(map[string]any)
	if !ok {
		v.fail(ep, "must be an object, not "+objects.KindOf(arr[i]))
	}
	return m, ep, ok
}

func (v *validator) nullableString(parent map[string]any, k string, at verbiage.Path) {
	switch x := parent[k].(type) {
	case string, nil:
	default:
		v.fail(at.Child(k), "must be a string or null, not "+objects.KindOf(x))
	}
}

func (v *validator) requiredString(parent map[string]any, k string, at verbiage.Path) {
	if _, ok := parent[k].(string); !ok {
		v.fail(at.Child(k), "must be a string, not "+objects.KindOf(parent[k]))
	}
}

func (v *validator) boolean(parent map[string]any, k string, at verbiage.Path) {
	if x, has := parent[k]; has {
		if _, ok := x.(bool); !ok {
			v.fail(at.Child(k), "must be true or false, not "+objects.KindOf(x))
		}
	}
}

func (v *validator) strings(parent map[string]any, k string, at verbiage.Path) {
	if a, ok := v.array(parent, k, at); ok {
		for i, e := range a {
			if _, ok := e.(string); !ok {
				v.fail(at.Child(k).Child(strconv.Itoa(i)), "must be a string, not "+objects.KindOf(e))
			}
		}
	}
}

func (v *validator) items(parent map[string]any, k string, at verbiage.Path) {
	if it, ok := v.object(parent, k, at); ok {
		v.object(it, KeyMeta, at.Child(k))
		v.object(it, KeyContent, at.Child(k))
	}
}

// common checks the fields goals and sub-goals share.
func (v *validator) common(m map[string]any, at verbiage.Path) {
	v.nullableString(m, KeyTitle, at)
	v.nullableString(m, KeySummary, at)
	v.nullableString(m, KeyStatus, at)
	v.strings(m, KeyNotes, at)
}

func (v *validator) goal(goals map[string]any, key string, at verbiage.Path) {
	g, ok := v.object(goals, key, at)
	if !ok {
		return
	}
	gp := at.Child(key)
	v.common(g, gp)
	if subs, ok := v.object(g, KeySubGoals, gp); ok {
		for _, k := range slices.Sorted(maps.Keys(subs)) {
			v.subGoal(subs, k, gp.Child(KeySubGoals))
		}
	}
}

func (v *validator) subGoal(subs map[string]any, key string, at verbiage.Path) {
	s, ok := v.object(subs, key, at)
	if !ok {
		return
	}
	sp := at.Child(key)
	v.common(s, sp)
	v.strings(s, KeyRequestNotes, sp)
	v.boolean(s, KeyInFlight, sp)
	v.nullableString(s, KeyLastRequest, sp)
	if x, has := s[KeyLastSeenIdx]; has {
		if n, ok := intOf(x); !ok || n < -1 {
			v.fail(sp.Child(KeyLastSeenIdx), "must be an integer of at least -1")
		}
	}
	if events, ok := v.array(s, KeyEvents, sp); ok {
		for i := range events {
			e, ep, ok := v.element(events, i, sp.Child(KeyEvents))
			if !ok {
				continue
			}
			for _, k := range []string{KeyID, KeyType, KeyBody, KeyCreatedAt} {
				v.nullableString(e, k, ep)
			}
			v.boolean(e, KeySeen, ep)
		}
	}
}

// intOf reads an integer JSON number.
func intOf(x any) (int, bool) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(n))
	return i, err == nil
}

func jsonInt(n int) json.Number { return json.Number(strconv.Itoa(n)) }
