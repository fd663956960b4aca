package rlm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aiwg/aiwg-state/internal/errkind"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/verbiage"
)

// Version is the schema version written into state headers and exports.
const Version = "1.0.0"

// Limits of the RLM state specification.
const (
	MaxVariables   = 1000
	MaxNameLen     = verbiage.MaxIdentifierLen
	MaxInlineBytes = 10240
	MaxHistory     = 10000
	MaxCheckpoints = 100
)

// Sentinel errors; the root package wraps them in its own sentinels for
// exit codes.
var (
	// ErrType: a value does not have the declared type.
	ErrType = errors.New("value does not match type")
	// ErrScope: a scope name that does not exist, or one the state lacks
	// (tree scope in a state without a tree).
	ErrScope = errors.New("invalid scope")
)

// Type is a variable's type, one of the eight of the specification.
type Type string

// The eight types of the RLM state specification.
const (
	TypeText        Type = "text"
	TypeNumber      Type = "number"
	TypeBoolean     Type = "boolean"
	TypeNull        Type = "null"
	TypeJSON        Type = "json"
	TypeArray       Type = "array"
	TypeFilePath    Type = "file_path"
	TypeFileContent Type = "file_content"
)

// Types lists the eight types in the specification's order.
func Types() []Type {
	return []Type{TypeText, TypeNumber, TypeBoolean, TypeNull, TypeJSON, TypeArray, TypeFilePath, TypeFileContent}
}

// ParseType checks a type name.
func ParseType(s string) (Type, error) {
	for _, t := range Types() {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("%w: unknown type %q (want one of text, number, boolean, null, json, array, file_path, file_content)", ErrType, s)
}

// FileRefPrefix starts a file_path value, as in the specification's examples
// ("file:.aiwg/rlm/state-a1b2c3d4/document.txt").
const FileRefPrefix = "file:"

// InferType is the type a value has when none is declared. A string that
// starts with "file:" is a file_path, as in the specification's examples.
func InferType(v any) Type {
	switch x := v.(type) {
	case nil:
		return TypeNull
	case bool:
		return TypeBoolean
	case json.Number, float64, int, int64:
		return TypeNumber
	case string:
		if strings.HasPrefix(x, FileRefPrefix) && len(x) > len(FileRefPrefix) {
			return TypeFilePath
		}
		return TypeText
	case []any:
		return TypeArray
	}
	return TypeJSON
}

// CheckType reports whether v may be stored with type t. json takes an
// object or an array (the specification's own example stores a list as json);
// file_content takes any value (it is kept in a file beside the variable).
func CheckType(t Type, v any) error {
	ok := false
	switch t {
	case TypeText:
		_, ok = v.(string)
	case TypeFilePath:
		s, isStr := v.(string)
		ok = isStr && s != ""
	case TypeNumber:
		ok = InferType(v) == TypeNumber
	case TypeBoolean:
		_, ok = v.(bool)
	case TypeNull:
		ok = v == nil
	case TypeJSON:
		switch v.(type) {
		case map[string]any, []any:
			ok = true
		}
	case TypeArray:
		_, ok = v.([]any)
	case TypeFileContent:
		ok = true
	default:
		_, err := ParseType(string(t))
		return err
	}
	if !ok {
		return fmt.Errorf("%w: a %s value cannot have type %s", ErrType, InferType(v), t)
	}
	return nil
}

// ParseValue reads a value given on a command line. With type text the
// argument is the string itself; otherwise it is JSON, and an argument
// that is not JSON is taken as text when no type was declared (so
// `var set city Paris` needs no quotes). The value is checked against t.
func ParseValue(arg string, t Type) (any, Type, error) {
	if t == TypeText || t == TypeFilePath {
		if t == TypeFilePath && arg == "" {
			return nil, "", fmt.Errorf("%w: an empty file_path", ErrType)
		}
		return arg, t, nil
	}
	v, err := objects.Decode([]byte(arg))
	if err != nil {
		if t != "" && t != TypeFileContent {
			return nil, "", fmt.Errorf("value for type %s: %w", t, err)
		}
		if !utf8Valid(arg) {
			return nil, "", fmt.Errorf("value: %w", err)
		}
		v = arg
	}
	if t == "" {
		return v, InferType(v), nil
	}
	if err := CheckType(t, v); err != nil {
		return nil, "", err
	}
	return v, t, nil
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// Scope is where a variable lives. The specification's four scopes, plus the
// state's own variables (prompt, Final, results propagated from child
// states), which belong to one state and no other.
type Scope string

// Scopes.
const (
	ScopeState     Scope = "state"
	ScopeTemporary Scope = "temporary"
	ScopeTree      Scope = "tree"
	ScopeSession   Scope = "session"
	ScopeGlobal    Scope = "global"
)

// DefaultScope is the specification's default.
const DefaultScope = ScopeSession

// ResolutionOrder is the order a read looks in: the state's own variables,
// then temporary → tree → session → global, as the RLM state
// specification orders them.
func ResolutionOrder() []Scope {
	return []Scope{ScopeState, ScopeTemporary, ScopeTree, ScopeSession, ScopeGlobal}
}

// ParseScope checks a scope name.
func ParseScope(s string) (Scope, error) {
	for _, sc := range ResolutionOrder() {
		if string(sc) == s {
			return sc, nil
		}
	}
	return "", fmt.Errorf("%w: %q (want global, session, tree, temporary or state)", ErrScope, s)
}

// Header is a state's header file, states/<id>/state.json. What can be
// derived (counts, completion, history) is not stored here.
type Header struct {
	Version         string         `json:"version"`
	StateID         string         `json:"state_id"`
	SessionID       string         `json:"session_id,omitempty"`
	TreeID          string         `json:"tree_id,omitempty"`
	ParentStateID   string         `json:"parent_state_id,omitempty"`
	CreatedAt       string         `json:"created_at"`
	ExecutionConfig map[string]any `json:"execution_config,omitempty"`
	// CompletionStatus is set when the state ended without a Final:
	// StatusError or StatusCancelled, with when and why. A state with
	// a Final is complete; one with neither is incomplete.
	CompletionStatus string `json:"completion_status,omitempty"`
	EndedAt          string `json:"ended_at,omitempty"`
	EndReason        string `json:"end_reason,omitempty"`
}

// HeaderPath is where a state's header lives.
func HeaderPath(stateID string) string { return "states/" + stateID + "/state.json" }

// StatesDir holds one directory per state.
const StatesDir = "states"

// Dir is the directory of a scope for a state.
func (h *Header) Dir(sc Scope) (string, error) {
	switch sc {
	case ScopeState:
		return "states/" + h.StateID + "/variables", nil
	case ScopeTemporary:
		return "temp/" + h.StateID + "/variables", nil
	case ScopeTree:
		if h.TreeID == "" {
			return "", fmt.Errorf("%w: %s is not part of a task tree (a state joins one when it is made)", ErrScope, h.StateID)
		}
		return "trees/" + h.TreeID + "/variables", nil
	case ScopeSession:
		if h.SessionID == "" {
			return "", fmt.Errorf("%w: %s has no session", ErrScope, h.StateID)
		}
		return "sessions/" + h.SessionID + "/variables", nil
	case ScopeGlobal:
		return "global/variables", nil
	}
	_, err := ParseScope(string(sc))
	return "", err
}

// Dirs lists the scope directories a state sees, in resolution order.
func (h *Header) Dirs() []ScopeDir {
	var out []ScopeDir
	for _, sc := range ResolutionOrder() {
		if d, err := h.Dir(sc); err == nil {
			out = append(out, ScopeDir{Scope: sc, Dir: d})
		}
	}
	return out
}

// ScopeDir is one directory a state sees.
type ScopeDir struct {
	Scope Scope
	Dir   string
}

// VarFile and DataFile are a variable's file and its large-value file.
func VarFile(dir, name string) string  { return dir + "/" + name + ".json" }
func DataFile(dir, name string) string { return dir + "/" + name + ".data" }

// NameOfFile returns the variable name of a file in a variables directory
// and whether it is the variable's file (not its .data or another file).
func NameOfFile(file string) (string, bool) {
	name, ok := strings.CutSuffix(file, ".json")
	if !ok || verbiage.ValidIdentifier(name) != nil {
		return "", false
	}
	return name, true
}

// Variable is one variable, as stored in its file and as exported. The
// stored file has no access_count (reads never commit; the count is kept
// outside the versioned tree and merged into exports).
type Variable struct {
	Name        string  `json:"name"`
	Value       any     `json:"value"`
	Type        Type    `json:"type"`
	Description string  `json:"description,omitempty"`
	Source      string  `json:"source,omitempty"`
	CreatedAt   string  `json:"created_at,omitempty"`
	UpdatedAt   string  `json:"updated_at,omitempty"`
	AccessCount *int64  `json:"access_count,omitempty"`
	Metadata    VarMeta `json:"metadata"`

	file string // the store path it was read from, for read checks
}

// File is the store path the variable was read from ("" for one not read
// from the store): what a sandbox profile's documents.read judges.
func (v *Variable) File() string { return v.file }

// VarMeta is a variable's metadata. ValueType and DataBytes describe a
// value kept in a .data file (type file_content): the type the content has,
// and its size, so that the variable's own file changes whenever the
// content does and `git log -- <file>` stays that variable's history.
type VarMeta struct {
	ReadOnly   bool   `json:"read_only,omitempty"`
	Scope      Scope  `json:"scope,omitempty"`
	TTLSeconds *int64 `json:"ttl_seconds,omitempty"`
	ValueType  Type   `json:"value_type,omitempty"`
	DataBytes  int64  `json:"data_bytes,omitempty"`
}

// IsStored reports whether the value lives in a .data file.
func (v *Variable) IsStored() bool {
	s, _ := v.Value.(string)
	return v.Type == TypeFileContent && v.Metadata.ValueType != "" && strings.HasPrefix(s, FileRefPrefix)
}

// Expired reports whether a variable with a TTL has outlived it at now.
func (v *Variable) Expired(now time.Time) bool {
	if v.Metadata.TTLSeconds == nil {
		return false
	}
	t, err := time.Parse(time.RFC3339Nano, v.UpdatedAt)
	if err != nil {
		return false
	}
	return !now.Before(t.Add(time.Duration(*v.Metadata.TTLSeconds) * time.Second))
}

// Encode returns the variable's file and, when the value is large (its
// canonical JSON over MaxInlineBytes) or typed file_content, the content of
// its .data file, whose store path is dataPath. A string is stored as its
// text and anything else as canonical JSON, one scalar per line, so a diff
// of the .data file reads like a diff of the value.
func (v *Variable) Encode(dataPath string) (file, data []byte, err error) {
	enc, err := objects.Encode(v.Value)
	if err != nil {
		return nil, nil, fmt.Errorf("variable %s: %w", v.Name, err)
	}
	out := *v
	out.AccessCount = nil
	// enc ends in the newline of a canonical file, which is not the value's.
	if v.Type == TypeFileContent || len(enc)-1 > MaxInlineBytes {
		vt := v.Type
		if _, text := v.Value.(string); vt == TypeFileContent && !text {
			// Content that is not text is kept as JSON, and read back
			// as the JSON it is.
			vt = InferType(v.Value)
		}
		if s, ok := v.Value.(string); ok {
			data = []byte(s)
		} else {
			data = enc
		}
		out.Type = TypeFileContent
		out.Value = FileRefPrefix + dataPath
		out.Metadata.ValueType = vt
		out.Metadata.DataBytes = int64(len(data))
	} else {
		out.Metadata.ValueType = ""
		out.Metadata.DataBytes = 0
	}
	raw, err := json.Marshal(&out)
	if err != nil {
		return nil, nil, err
	}
	file, err = objects.Canonical(raw)
	return file, data, err
}

// DecodeVariable reads a variable's file.
func DecodeVariable(file []byte) (*Variable, error) {
	dec := json.NewDecoder(bytes.NewReader(file))
	dec.UseNumber()
	var v Variable
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: variable file: %v", objects.ErrInvalidJSON, err)
	}
	return &v, nil
}

// Load replaces the reference of a stored value with the content of its
// .data file, giving back the value and type it was set with.
func (v *Variable) Load(data []byte) error {
	if !v.IsStored() {
		return nil
	}
	if t := v.Metadata.ValueType; t == TypeText || t == TypeFilePath || t == TypeFileContent {
		v.Value = string(data)
	} else {
		x, err := objects.Decode(data)
		if err != nil {
			return fmt.Errorf("variable %s: .data file: %w", v.Name, err)
		}
		v.Value = x
	}
	v.Type = v.Metadata.ValueType
	v.Metadata.ValueType = ""
	v.Metadata.DataBytes = 0
	return nil
}

// DataPath is the store path a stored value's reference names.
func (v *Variable) DataPath() string {
	s, _ := v.Value.(string)
	return strings.TrimPrefix(s, FileRefPrefix)
}

// SameContent reports whether two variables differ only in what every
// write changes (timestamps, source, access count): setting a variable to
// what it holds writes no commit.
func SameContent(a, b *Variable) bool {
	if a == nil || b == nil {
		return a == b
	}
	ta, tb := a.Metadata.TTLSeconds, b.Metadata.TTLSeconds
	if (ta == nil) != (tb == nil) || (ta != nil && *ta != *tb) {
		return false
	}
	return a.Type == b.Type && a.Description == b.Description && a.Metadata.ReadOnly == b.Metadata.ReadOnly &&
		a.Metadata.Scope == b.Metadata.Scope && objects.Equal(a.Value, b.Value)
}

// Timestamp formats a time as the store's variables and headers record it.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ResultName is the variable a child state's Final is propagated to in
// its parent (the specification: "Leaf task sets Final → result returned to parent").
func ResultName(childID string) string {
	return "result_" + strings.ReplaceAll(childID, "-", "_")
}

// CheckExecutionConfig checks the fields of the RLM state specification's ExecutionConfig
// that it constrains (model a string, temperature 0 to 2, seed and
// context_window_tokens integers, the latter at least 1000,
// execution_mode one of strict, seeded, logged, default); other keys pass.
func CheckExecutionConfig(c map[string]any) error {
	bad := func(k, want string) error {
		return errkind.Errorf(ErrInvalidDocument, "execution_config.%s: want %s", k, want)
	}
	for k, v := range c {
		switch k {
		case "model":
			if _, ok := v.(string); !ok {
				return bad(k, "a string")
			}
		case "temperature":
			if f, ok := number(v); !ok || f < 0 || f > 2 {
				return bad(k, "a number from 0 to 2")
			}
		case "seed", "context_window_tokens":
			f, ok := number(v)
			if !ok || f != float64(int64(f)) || (k == "context_window_tokens" && f < 1000) {
				if k == "seed" {
					return bad(k, "an integer")
				}
				return bad(k, "an integer of at least 1000")
			}
		case "execution_mode":
			if s, ok := v.(string); !ok || !slices.Contains([]string{"strict", "seeded", "logged", "default"}, s) {
				return bad(k, "one of strict, seeded, logged, default")
			}
		}
	}
	return nil
}

// number reads a decoded JSON number (json.Number or float64).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}
