package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"

	"github.com/aiwg/aiwg-state/verbiage"
)

// Path is where a store keeps its policy.
const Path = ".aiwg/policy.json"

// Placeholder in a path pattern stands for the agent being checked.
const Placeholder = "{agent}"

var (
	// ErrDenied: the policy does not let the agent write the path.
	ErrDenied = errors.New("denied by access policy")
	// ErrInvalid: the policy file cannot be read as a policy.
	ErrInvalid = errors.New("invalid access policy")
)

// Effects of a rule.
const (
	Allow = "allow"
	Deny  = "deny"
)

// Policy is a parsed, validated policy file. The zero of *Policy (nil)
// allows every write: a store without a policy file is open.
type Policy struct {
	Default string `json:"default,omitempty"`
	// RequireSigned names whose commits must be signed: true (everyone),
	// or a list of agents, patterns and "role:NAME" (see Requirement).
	RequireSigned Requirement `json:"require_signed,omitzero"`
	// Signers lists, per agent id, the SSH public keys its commits may be
	// signed with ("ssh-ed25519 AAAA…", as in authorized_keys).
	Signers map[string][]string `json:"signers,omitempty"`
	Roles   map[string][]string `json:"roles,omitempty"`
	Rules   []Rule              `json:"rules"`
	// Pushers and RequirePusher map the identities a server authenticates
	// to the agents they may act as (see pushers.go).
	Pushers       map[string]Pusher `json:"pushers,omitempty"`
	RequirePusher *bool             `json:"require_pusher,omitempty"`
	// Profiles are the store's sandbox profiles by name, and Sandbox
	// assigns them (and the presets) to agents and roles (see profile.go).
	Profiles map[string]Profile `json:"profiles,omitempty"`
	Sandbox  []Assignment       `json:"sandbox,omitempty"`

	compiled []compiledRule
	profiles map[string]*Profile
	keys     signerKeys
}

// Rule grants or denies writes of some paths to some agents.
type Rule struct {
	Name   string   `json:"name,omitempty"`
	Agents []string `json:"agents,omitempty"`
	Roles  []string `json:"roles,omitempty"`
	Paths  []string `json:"paths"`
	Effect string   `json:"effect,omitempty"`
}

type compiledRule struct {
	fixed   []verbiage.Pattern // patterns without {agent}
	perUser []string           // patterns with {agent}, compiled per check
}

// Parse reads and validates a policy file. Unknown fields are refused: a
// misspelt "efect": "deny" must not silently become an allow.
func Parse(data []byte) (*Policy, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Policy
	if err := dec.Decode(&p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// "rules: a number where an array was expected": the words
			// of the file, not of the Go types it is read into.
			return nil, fmt.Errorf("%w: %s: %s: %s where %s was expected", ErrInvalid, Path, te.Field, withArticle(te.Value), jsonKind(te.Type.Kind()))
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, Path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: data after the policy object", ErrInvalid, Path)
	}
	if err := p.compile(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, Path, err)
	}
	return &p, nil
}

func (p *Policy) compile() error {
	switch p.Default {
	case "":
		p.Default = Deny
	case Allow, Deny:
	default:
		return fmt.Errorf("default is %q; want %q or %q", p.Default, Allow, Deny)
	}
	for role, members := range p.Roles {
		for _, m := range members {
			if err := checkSubject(m); err != nil {
				return fmt.Errorf("role %q: %v", role, err)
			}
		}
	}
	if err := p.compilePushers(); err != nil {
		return err
	}
	if err := p.compileSigning(); err != nil {
		return err
	}
	if err := p.compileProfiles(); err != nil {
		return err
	}
	p.compiled = make([]compiledRule, len(p.Rules))
	for i := range p.Rules {
		r := &p.Rules[i]
		where := ruleLabel(i, r)
		switch r.Effect {
		case "":
			r.Effect = Allow
		case Allow, Deny:
		default:
			return fmt.Errorf("%s: effect is %q; want %q or %q", where, r.Effect, Allow, Deny)
		}
		if len(r.Paths) == 0 {
			return fmt.Errorf("%s: no paths", where)
		}
		if len(r.Agents) == 0 && len(r.Roles) == 0 {
			return fmt.Errorf("%s: names no agents and no roles", where)
		}
		for _, a := range r.Agents {
			if err := checkSubject(a); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		}
		for _, role := range r.Roles {
			if _, ok := p.Roles[role]; !ok {
				return fmt.Errorf("%s: unknown role %q", where, role)
			}
		}
		for _, pat := range r.Paths {
			if strings.Contains(pat, Placeholder) {
				// Compile once with a plain id so a broken pattern is refused
				// now, not at the first check.
				if _, err := verbiage.CompilePattern(strings.ReplaceAll(pat, Placeholder, "agent")); err != nil {
					return fmt.Errorf("%s: %v", where, err)
				}
				p.compiled[i].perUser = append(p.compiled[i].perUser, pat)
				continue
			}
			cp, err := verbiage.CompilePattern(pat)
			if err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			p.compiled[i].fixed = append(p.compiled[i].fixed, cp)
		}
	}
	return nil
}

func checkSubject(s string) error {
	if s == "" {
		return errors.New("empty agent pattern")
	}
	if _, err := path.Match(s, ""); err != nil {
		return fmt.Errorf("agent pattern %q: %v", s, err)
	}
	return nil
}

func ruleLabel(i int, r *Rule) string {
	if r.Name != "" {
		return fmt.Sprintf("rule %d (%s)", i+1, r.Name)
	}
	return fmt.Sprintf("rule %d", i+1)
}

// Decision is the outcome of a check and the rule that made it.
type Decision struct {
	Allowed bool
	// Rule names the deciding rule ("rule 3 (only own sessions)"), or
	// "default deny" / "default allow", or "no policy"; or the sandbox
	// profile and its rule ("sandbox profile \"minimal\", rule
	// documents.write"), when the profile refused what the rules allow.
	Rule string
	// Profile is set when the agent's sandbox profile refused.
	Profile *ProfileError
}

// TTLDir holds the documents' time-to-live files: TTLDir + FILE is
// FILE's. Decide judges one as the document it is about, so whoever may
// write a document may give it, or its keys, a time to live, whatever the
// rules say of the store's own directory.
const TTLDir = ".aiwg/ttl/"

// Decide says whether agent may write file (a store path): the rules
// must allow it, and the agent's sandbox profile, if it has one.
func (p *Policy) Decide(agent, file string) Decision {
	d := p.decideRules(agent, file)
	if !d.Allowed {
		return d
	}
	if pr, _ := p.ProfileOf(agent); pr != nil {
		var pe *ProfileError
		if errors.As(pr.CheckWrite(agent, file), &pe) {
			return Decision{Allowed: false, Rule: fmt.Sprintf("sandbox profile %q, rule %s", pe.Profile, pe.Rule), Profile: pe}
		}
	}
	return d
}

func (p *Policy) decideRules(agent, file string) Decision {
	if p == nil {
		return Decision{Allowed: true, Rule: "no policy"}
	}
	if doc, ok := strings.CutPrefix(file, TTLDir); ok && doc != "" && !strings.HasPrefix(doc, ".aiwg/") {
		file = doc
	}
	for i := range p.Rules {
		r := &p.Rules[i]
		if !p.names(r, agent) || !p.compiled[i].matches(agent, file) {
			continue
		}
		return Decision{Allowed: r.Effect == Allow, Rule: ruleLabel(i, r)}
	}
	return Decision{Allowed: p.Default == Allow, Rule: "default " + p.Default}
}

// Check is Decide as an error: a *Denial (or, when the sandbox profile
// refused, a *ProfileError) wrapping ErrDenied, or nil.
func (p *Policy) Check(agent, file string) error {
	d := p.Decide(agent, file)
	if d.Allowed {
		return nil
	}
	if d.Profile != nil {
		return d.Profile
	}
	return &Denial{Agent: agent, Path: file, Rule: d.Rule}
}

func (p *Policy) names(r *Rule, agent string) bool {
	for _, a := range r.Agents {
		if ok, _ := path.Match(a, agent); ok {
			return true
		}
	}
	for _, role := range r.Roles {
		for _, m := range p.Roles[role] {
			if ok, _ := path.Match(m, agent); ok {
				return true
			}
		}
	}
	return false
}

func (c *compiledRule) matches(agent, file string) bool {
	for _, pat := range c.fixed {
		if pat.Match(file) {
			return true
		}
	}
	if len(c.perUser) == 0 || !placeholderSafe(agent) {
		return false
	}
	esc := escapeGlob(agent)
	for _, pat := range c.perUser {
		cp, err := verbiage.CompilePattern(strings.ReplaceAll(pat, Placeholder, esc))
		if err == nil && cp.Match(file) {
			return true
		}
	}
	return false
}

// placeholderSafe keeps an agent id from reaching outside the one path
// segment {agent} stands for.
func placeholderSafe(agent string) bool {
	return agent != "" && agent != "." && agent != ".." && !strings.ContainsAny(agent, "/\x00\n")
}

func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Denial says who was refused what, and by which rule. Commit is set when
// the write was a received commit.
type Denial struct {
	Commit string
	Agent  string
	Path   string
	Rule   string
}

func (d *Denial) Error() string {
	at := ""
	if d.Commit != "" {
		at = "commit " + d.Commit + ": "
	}
	return fmt.Sprintf("%sagent %q may not write %s (%s): %v", at, d.Agent, d.Path, d.Rule, ErrDenied)
}

func (d *Denial) Unwrap() error { return ErrDenied }

// jsonKind names the JSON a Go kind is read from, for messages.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	}
	return "a number"
}

func withArticle(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
