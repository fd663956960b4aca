package statedoc

import (
	"fmt"
	"strconv"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Scope says where items live: global (no project), a project's, or a
// chat's within a project; Meta picks the META tree instead of CONTENT.
type Scope struct {
	Project string
	Chat    string
	Meta    bool
}

// ItemPath parses an item path in the slash (ALPHA/BETA) or dot
// (alpha.beta) form and normalizes its keys. Wildcards and the empty path
// are refused with verbiage.ErrInvalidPath.
func ItemPath(s string) (verbiage.Path, error) {
	p, err := verbiage.ParsePath(s)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("%w: an item path names an item (e.g. ALPHA/BETA)", verbiage.ErrInvalidPath)
	}
	for _, seg := range p {
		if seg.Wildcard {
			return nil, fmt.Errorf("%w: %q: wildcards do not address one item", verbiage.ErrInvalidPath, s)
		}
	}
	return verbiage.NormalizePath(p)
}

// scopeBase finds the META or CONTENT object of a scope. create adds a
// missing project or chat entry (item set); otherwise a missing one is
// objects.ErrNotFound. A chat without a project uses ACTIVE-PROJECT.
func scopeBase(doc any, sc Scope, create bool) (any, verbiage.Path, error) {
	leaf := KeyContent
	if sc.Meta {
		leaf = KeyMeta
	}
	project := sc.Project
	if project == "" && sc.Chat != "" {
		ap, _ := objects.Get(doc, verbiage.Path{{Key: KeyActiveProject}, {Key: KeyProjectID}})
		id, ok := ap.(string)
		if !ok || id == "" {
			return nil, nil, ErrNoProject
		}
		project = id
	}
	base := verbiage.Path{{Key: KeyItems}}
	if project == "" {
		return doc, append(base, verbiage.Segment{Key: KeyGlobal}, verbiage.Segment{Key: leaf}), nil
	}
	doc, pp, err := entry(doc, base.Child(KeyProjects), KeyProjectID, project, create, "project")
	if err != nil {
		return nil, nil, err
	}
	if sc.Chat != "" {
		if doc, pp, err = entry(doc, pp.Child(KeyChats), KeyChatID, sc.Chat, create, "chat"); err != nil {
			return nil, nil, err
		}
	}
	return doc, append(pp, verbiage.Segment{Key: KeyItems}, verbiage.Segment{Key: leaf}), nil
}

// entry finds the element of the array at arr whose idKey is id, adding
// it when create is set.
func entry(doc any, arr verbiage.Path, idKey, id string, create bool, what string) (any, verbiage.Path, error) {
	v, err := objects.Get(doc, arr)
	if err != nil && !create {
		return nil, nil, fmt.Errorf("%w: no %s %q", objects.ErrNotFound, what, id)
	}
	list, _ := v.([]any)
	for i, e := range list {
		if m, ok := e.(map[string]any); ok && m[idKey] == id {
			return doc, arr.Child(strconv.Itoa(i)), nil
		}
	}
	if !create {
		return nil, nil, fmt.Errorf("%w: no %s %q", objects.ErrNotFound, what, id)
	}
	e := map[string]any{idKey: id, KeyItems: itemsRoot()}
	if idKey == KeyProjectID {
		e[KeyChats] = []any{}
	}
	if v == nil {
		list = []any{}
	}
	out, err := objects.Set(doc, arr, append(list[:len(list):len(list)], e))
	if err != nil {
		return nil, nil, err
	}
	return out, arr.Child(strconv.Itoa(len(list))), nil
}

// SetItem stores value at path p in scope, creating missing objects on the
// way (deep set); a scalar on the way is objects.ErrNotContainer. Object
// keys in value are normalized, and keys that collide after normalization
// are refused (verbiage.ErrInvalidKey).
func SetItem(doc any, sc Scope, p verbiage.Path, value any) (any, []verbiage.Path, error) {
	v, err := verbiage.NormalizeKeys(value)
	if err != nil {
		return nil, nil, err
	}
	doc, base, err := scopeBase(doc, sc, true)
	if err != nil {
		return nil, nil, err
	}
	at := append(base, p...)
	out, err := objects.Set(doc, at, v)
	if err != nil {
		return nil, nil, err
	}
	return out, []verbiage.Path{at}, nil
}

// GetItem returns the item at p in scope; objects.ErrNotFound when absent.
func GetItem(doc any, sc Scope, p verbiage.Path) (any, error) {
	doc, base, err := scopeBase(doc, sc, false)
	if err != nil {
		return nil, err
	}
	v, err := objects.Get(doc, append(base, p...))
	if err != nil {
		return nil, fmt.Errorf("item %s: %w", p.String(), err)
	}
	return v, nil
}

// DeleteItem removes the item at p in scope; objects.ErrNotFound when
// absent.
func DeleteItem(doc any, sc Scope, p verbiage.Path) (any, []verbiage.Path, error) {
	doc, base, err := scopeBase(doc, sc, false)
	if err != nil {
		return nil, nil, err
	}
	at := append(base, p...)
	out, err := objects.Delete(doc, at)
	if err != nil {
		return nil, nil, fmt.Errorf("item %s: %w", p.String(), err)
	}
	return out, []verbiage.Path{at}, nil
}

// SelectProject makes id the ACTIVE-PROJECT, with its title (null when
// empty).
func SelectProject(doc any, id, title string) (any, []verbiage.Path, error) {
	if id == "" {
		return nil, nil, fmt.Errorf("%w: a project id is needed", verbiage.ErrInvalidPath)
	}
	p := verbiage.Path{{Key: KeyActiveProject}}
	return setAll(doc, field{p, map[string]any{KeyProjectID: id, KeyTitle: nullable(title)}})
}
