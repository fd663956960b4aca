package policy

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/aiwg/aiwg-state/verbiage"
)

// Sandbox profiles: what an agent may use, per tier of state. The write
// rules say which paths an agent may write; a profile narrows that, and
// reaches where rules do not: reads, the cache and the frame, which no
// commit records. Both must allow a write.
//
//	"profiles": {
//	  "scraper": {
//	    "documents": {"read": ["public/**"], "write": ["agents/{agent}/**"]},
//	    "memory": ["session"],
//	    "queues": ["alerts"],
//	    "tables": {"read": ["*"], "write": ["scraped_*"]},
//	    "coordination": false,
//	    "cache": {"allowed": true, "max_bytes": 65536},
//	    "frame": {"max_bytes": 262144}
//	  }
//	},
//	"sandbox": [
//	  {"agents": ["scraper-*"], "profile": "scraper"},
//	  {"roles": ["workers"], "profile": "compute-and-store"}
//	]
//
// The first "sandbox" entry that names the agent (by id, pattern or role)
// gives its profile; an agent no entry names has none, and only the rules
// bound it. A profile is a name of "profiles" or one of the presets.

// The tiers a profile speaks of, as a refusal names them.
const (
	TierDocuments    = "documents"
	TierMemory       = "memory"
	TierQueues       = "queues"
	TierTables       = "tables"
	TierCoordination = "coordination"
	TierCache        = "cache"
	TierFrame        = "frame"
)

// Where the tiers other than documents keep their files in the store's
// tree; a write there is judged by that tier's rule, not documents'.
const (
	memoryDir     = "memory/"
	queuesDir     = "queues/"
	tablesDir     = "tables/"
	tableDeclsDir = ".aiwg/tables/"
	eventsDir     = "events/"
	leasesDir     = "leases/"
)

// Profile is a sandbox profile. A field left out allows nothing of its
// tier, except the frame, which every profile has unless it says
// "allowed": false (a run's scratch values are the least a workflow needs).
type Profile struct {
	Documents ReadWrite `json:"documents,omitzero"`
	// Memory lists the memory namespaces (patterns, path.Match) the agent
	// may read and write.
	Memory []string `json:"memory,omitempty"`
	// Queues lists the queues (patterns) the agent may put to, take from
	// and peek at.
	Queues []string `json:"queues,omitempty"`
	// Tables lists the SQL tables (patterns over table names) the agent
	// may read and write.
	Tables ReadWrite `json:"tables,omitzero"`
	// Coordination: events and leases, the tier agents coordinate through.
	Coordination bool    `json:"coordination,omitempty"`
	Cache        Bounded `json:"cache,omitzero"`
	Frame        Bounded `json:"frame,omitzero"`

	name   string
	preset bool
	read   []verbiage.Pattern
	write  []verbiage.Pattern
	// readAgent and writeAgent are the patterns holding {agent}, compiled
	// per check.
	readAgent, writeAgent []string
}

// ReadWrite lists patterns an agent may read and may write.
type ReadWrite struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// Bounded says whether a disposable tier may be used, and how much of it.
type Bounded struct {
	Allowed *bool `json:"allowed,omitempty"`
	// MaxBytes bounds it: for the cache, one entry's value; for the
	// frame, one run's keys and values together. 0: the store's limit.
	MaxBytes int64 `json:"max_bytes,omitempty"`
}

// Assignment gives the agents it names a profile.
type Assignment struct {
	Agents  []string `json:"agents,omitempty"`
	Roles   []string `json:"roles,omitempty"`
	Profile string   `json:"profile"`
}

func yes() *bool { t := true; return &t }
func no() *bool  { f := false; return &f }

// Presets are the named profiles of the tiered state specification,
// usable in "sandbox" without being declared. A store may declare a
// profile of the same name to change one.
var Presets = map[string]Profile{
	// Minimal: the frame alone.
	"minimal": {Frame: Bounded{Allowed: yes()}, Cache: Bounded{Allowed: no()}},
	// Compute-and-store: frame, cache, memory, tables and documents; no
	// queues, no coordination with other agents.
	"compute-and-store": {
		Documents: ReadWrite{Read: []string{"**"}, Write: []string{"**"}},
		Memory:    []string{"*"},
		Tables:    ReadWrite{Read: []string{"*"}, Write: []string{"*"}},
		Cache:     Bounded{Allowed: yes()}, Frame: Bounded{Allowed: yes()},
	},
	// Network-restricted: compute-and-store with queues.
	"network-restricted": {
		Documents: ReadWrite{Read: []string{"**"}, Write: []string{"**"}},
		Memory:    []string{"*"},
		Queues:    []string{"*"},
		Tables:    ReadWrite{Read: []string{"*"}, Write: []string{"*"}},
		Cache:     Bounded{Allowed: yes()}, Frame: Bounded{Allowed: yes()},
	},
	// Operator-controlled: every tier, coordination with other agents too.
	"operator-controlled": {
		Documents:    ReadWrite{Read: []string{"**"}, Write: []string{"**"}},
		Memory:       []string{"*"},
		Queues:       []string{"*"},
		Tables:       ReadWrite{Read: []string{"*"}, Write: []string{"*"}},
		Coordination: true,
		Cache:        Bounded{Allowed: yes()}, Frame: Bounded{Allowed: yes()},
	},
}

// PresetNames lists the presets in the order the specification gives them.
var PresetNames = []string{"minimal", "compute-and-store", "network-restricted", "operator-controlled"}

// compileProfiles checks "profiles" and "sandbox" and compiles the
// profiles' patterns.
func (p *Policy) compileProfiles() error {
	p.profiles = map[string]*Profile{}
	for _, name := range PresetNames {
		pr := Presets[name]
		pr.Memory, pr.Queues = slices.Clone(pr.Memory), slices.Clone(pr.Queues)
		if err := pr.compile(name, true); err != nil {
			return err
		}
		p.profiles[name] = &pr
	}
	for name, pr := range p.Profiles {
		if name == "" || strings.ContainsAny(name, "\x00\n") {
			return fmt.Errorf("profile %q: not a name", name)
		}
		pr := pr
		if err := pr.compile(name, false); err != nil {
			return err
		}
		p.profiles[name] = &pr
	}
	for i, a := range p.Sandbox {
		where := fmt.Sprintf("sandbox entry %d", i+1)
		if a.Profile == "" {
			return fmt.Errorf("%s: names no profile", where)
		}
		if p.profiles[a.Profile] == nil {
			return fmt.Errorf("%s: unknown profile %q (declare it in \"profiles\", or use a preset: %s)", where, a.Profile, strings.Join(PresetNames, ", "))
		}
		if len(a.Agents) == 0 && len(a.Roles) == 0 {
			return fmt.Errorf("%s: names no agents and no roles", where)
		}
		for _, s := range a.Agents {
			if err := checkSubject(s); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		}
		for _, role := range a.Roles {
			if _, ok := p.Roles[role]; !ok {
				return fmt.Errorf("%s: unknown role %q", where, role)
			}
		}
	}
	return nil
}

func (pr *Profile) compile(name string, preset bool) error {
	pr.name, pr.preset = name, preset
	where := fmt.Sprintf("profile %q", name)
	compile := func(pats []string, fixed *[]verbiage.Pattern, perAgent *[]string) error {
		for _, pat := range pats {
			probe := pat
			if strings.Contains(pat, Placeholder) {
				probe = strings.ReplaceAll(pat, Placeholder, "agent")
			}
			cp, err := verbiage.CompilePattern(probe)
			if err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			if probe != pat {
				*perAgent = append(*perAgent, pat)
				continue
			}
			*fixed = append(*fixed, cp)
		}
		return nil
	}
	if err := compile(pr.Documents.Read, &pr.read, &pr.readAgent); err != nil {
		return err
	}
	if err := compile(pr.Documents.Write, &pr.write, &pr.writeAgent); err != nil {
		return err
	}
	for _, group := range [][]string{pr.Memory, pr.Queues, pr.Tables.Read, pr.Tables.Write} {
		for _, g := range group {
			if err := checkSubject(g); err != nil {
				return fmt.Errorf("%s: %v", where, strings.Replace(err.Error(), "agent pattern", "pattern", 1))
			}
		}
	}
	for tier, b := range map[string]Bounded{TierCache: pr.Cache, TierFrame: pr.Frame} {
		if b.MaxBytes < 0 {
			return fmt.Errorf("%s: %s.max_bytes is negative", where, tier)
		}
	}
	return nil
}

// Name is the profile's name; Preset whether it is one of the presets as
// shipped.
func (pr *Profile) Name() string { return pr.name }

// Preset reports whether the profile is a preset as shipped (not one a
// store declared under a preset's name).
func (pr *Profile) Preset() bool { return pr.preset }

// ProfileOf is the profile the policy gives agent, and the sandbox entry
// that gives it ("sandbox entry 2"); nil when none does (or p is nil).
func (p *Policy) ProfileOf(agent string) (*Profile, string) {
	if p == nil {
		return nil, ""
	}
	for i, a := range p.Sandbox {
		if p.names(&Rule{Agents: a.Agents, Roles: a.Roles}, agent) {
			return p.profiles[a.Profile], fmt.Sprintf("sandbox entry %d", i+1)
		}
	}
	return nil, ""
}

// Profile is a profile by name, declared or preset; nil when unknown.
func (p *Policy) Profile(name string) *Profile {
	if p == nil {
		return nil
	}
	return p.profiles[name]
}

// ProfileError is a profile's refusal: which profile, which of its rules,
// and what the agent asked for. It wraps ErrDenied.
type ProfileError struct {
	Agent   string
	Profile string
	// Rule is the profile's rule that refuses: "documents.write",
	// "memory", "cache.max_bytes"...
	Rule string
	// Access is what was asked: "read", "write", "use".
	Access string
	// Target is what was asked for: a path, a namespace, a table.
	Target string
	// Detail says more, for a size: "70000 bytes; the profile allows 65536".
	Detail string
}

func (e *ProfileError) Error() string {
	target := ""
	if e.Target != "" {
		target = " " + e.Target
	}
	detail := ""
	if e.Detail != "" {
		detail = ": " + e.Detail
	}
	return fmt.Sprintf("agent %q may not %s%s (sandbox profile %q, rule %s%s): %v", e.Agent, e.Access, target, e.Profile, e.Rule, detail, ErrDenied)
}

func (e *ProfileError) Unwrap() error { return ErrDenied }

func (pr *Profile) deny(agent, rule, access, target, detail string) *ProfileError {
	return &ProfileError{Agent: agent, Profile: pr.name, Rule: rule, Access: access, Target: target, Detail: detail}
}

// tierOf says which tier a store path belongs to, and the name that
// tier's rule is matched against (a namespace, queue or table).
func tierOf(file string) (tier, name string) {
	first := func(rest string) string {
		n, _, _ := strings.Cut(rest, "/")
		return n
	}
	switch {
	case strings.HasPrefix(file, memoryDir):
		return TierMemory, first(strings.TrimPrefix(file, memoryDir))
	case strings.HasPrefix(file, queuesDir):
		return TierQueues, first(strings.TrimPrefix(file, queuesDir))
	case strings.HasPrefix(file, tablesDir):
		return TierTables, first(strings.TrimPrefix(file, tablesDir))
	case strings.HasPrefix(file, tableDeclsDir):
		n := first(strings.TrimPrefix(file, tableDeclsDir))
		return TierTables, strings.TrimSuffix(n, path.Ext(n))
	case strings.HasPrefix(file, eventsDir), strings.HasPrefix(file, leasesDir):
		return TierCoordination, ""
	}
	return TierDocuments, ""
}

// isControlFile reports whether file is one of the store's own settings:
// the access policy, the manifest and everything else under .aiwg/ (a
// document's time to live and a table's declaration are judged as their
// tier's before this), and .gitattributes, which names the merge drivers.
// A preset's documents.write "**" means the agent's documents, never
// these: a sandboxed agent that could write the policy could lift its
// own sandbox.
func isControlFile(file string) bool {
	return strings.HasPrefix(file, ".aiwg/") || file == ".gitattributes"
}

func matchAny(pats []string, name string) bool {
	for _, p := range pats {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func (pr *Profile) matchDoc(agent, file string, fixed []verbiage.Pattern, perAgent []string) bool {
	for _, pat := range fixed {
		if pat.Match(file) {
			return true
		}
	}
	if len(perAgent) == 0 || !placeholderSafe(agent) {
		return false
	}
	esc := escapeGlob(agent)
	for _, pat := range perAgent {
		cp, err := verbiage.CompilePattern(strings.ReplaceAll(pat, Placeholder, esc))
		if err == nil && cp.Match(file) {
			return true
		}
	}
	return false
}

// CheckWrite is nil when the profile lets agent write file (a store
// path), else the *ProfileError naming the tier's rule.
func (pr *Profile) CheckWrite(agent, file string) error {
	return pr.check(agent, file, "write")
}

// CheckRead is CheckWrite for a read.
func (pr *Profile) CheckRead(agent, file string) error {
	return pr.check(agent, file, "read")
}

func (pr *Profile) check(agent, file, access string) error {
	if pr == nil {
		return nil
	}
	if doc, ok := strings.CutPrefix(file, TTLDir); ok && doc != "" && !strings.HasPrefix(doc, ".aiwg/") {
		file = doc // a time to live is its document's
	}
	tier, name := tierOf(file)
	ok := false
	rule := tier
	switch tier {
	case TierMemory:
		ok = matchAny(pr.Memory, name)
	case TierQueues:
		ok = matchAny(pr.Queues, name)
	case TierTables:
		rule = TierTables + "." + access
		if access == "read" {
			ok = pr.MayReadTable(name)
		} else {
			ok = pr.MayWriteTable(name)
		}
	case TierCoordination:
		ok = pr.Coordination
	default:
		rule = TierDocuments + "." + access
		if access == "read" {
			ok = pr.matchDoc(agent, file, pr.read, pr.readAgent)
		} else if pr.preset && isControlFile(file) {
			return pr.deny(agent, rule, access, file, "a preset profile never writes the store's own settings (.aiwg/, .gitattributes): declare a profile that names them")
		} else {
			ok = pr.matchDoc(agent, file, pr.write, pr.writeAgent)
		}
	}
	if ok {
		return nil
	}
	return pr.deny(agent, rule, access, file, "")
}

// MayReadTable reports whether the profile lets its agent read the SQL
// table name (a mirrored table or an agent table). A nil profile (an
// agent without one) may.
func (pr *Profile) MayReadTable(name string) bool {
	return pr == nil || matchAny(pr.Tables.Read, name)
}

// MayWriteTable reports whether the profile lets its agent write the SQL
// table name.
func (pr *Profile) MayWriteTable(name string) bool {
	return pr == nil || matchAny(pr.Tables.Write, name)
}

// MayUseMemory reports whether the profile lets its agent read and write
// the memory namespace ns.
func (pr *Profile) MayUseMemory(ns string) bool { return pr == nil || matchAny(pr.Memory, ns) }

// MayUseQueue reports whether the profile lets its agent use queue name.
func (pr *Profile) MayUseQueue(name string) bool { return pr == nil || matchAny(pr.Queues, name) }

// CacheAllowed reports whether the agent may use the cache, and the
// largest value it may set (0: the store's bound alone).
func (pr *Profile) CacheAllowed() (bool, int64) {
	if pr == nil {
		return true, 0
	}
	return pr.Cache.Allowed != nil && *pr.Cache.Allowed, pr.Cache.MaxBytes
}

// FrameAllowed reports whether the agent may keep a frame, and the most
// bytes one run's frame may hold (0: the store's max_frame_bytes alone).
func (pr *Profile) FrameAllowed() (bool, int64) {
	if pr == nil {
		return true, 0
	}
	return pr.Frame.Allowed == nil || *pr.Frame.Allowed, pr.Frame.MaxBytes
}

// CheckCache is nil when agent may set a cache value of size bytes (size
// 0: any use of the cache, a read).
func (pr *Profile) CheckCache(agent string, size int64) error {
	ok, max := pr.CacheAllowed()
	if !ok {
		return pr.deny(agent, "cache.allowed", "use", "the cache", "")
	}
	if max > 0 && size > max {
		return pr.deny(agent, "cache.max_bytes", "use", "the cache", fmt.Sprintf("a value of %d bytes; the profile allows %d", size, max))
	}
	return nil
}

// CheckFrame is nil when agent may keep a frame of size bytes.
func (pr *Profile) CheckFrame(agent string, size int64) error {
	ok, max := pr.FrameAllowed()
	if !ok {
		return pr.deny(agent, "frame.allowed", "use", "a frame", "")
	}
	if max > 0 && size > max {
		return pr.deny(agent, "frame.max_bytes", "use", "a frame", fmt.Sprintf("%d bytes; the profile allows %d", size, max))
	}
	return nil
}

// Explanation is what an agent may do, as `policy explain` prints it.
type Explanation struct {
	Agent string   `json:"agent"`
	Roles []string `json:"roles"`
	// Rules are the write rules that name the agent, in order.
	Rules   []ExplainedRule `json:"rules"`
	Default string          `json:"default"`
	// NoPolicy: the store has no policy; the agent may do anything.
	NoPolicy bool `json:"no_policy,omitempty"`
	// Profile is the agent's sandbox profile; nil when it has none.
	Profile *ExplainedProfile `json:"profile"`
}

// ExplainedRule is one write rule as it applies to the agent.
type ExplainedRule struct {
	Rule   string   `json:"rule"`
	Effect string   `json:"effect"`
	Paths  []string `json:"paths"`
}

// ExplainedProfile is a profile, every tier spelt out.
type ExplainedProfile struct {
	Name         string    `json:"name"`
	Preset       bool      `json:"preset"`
	AssignedBy   string    `json:"assigned_by"`
	Documents    ReadWrite `json:"documents"`
	Memory       []string  `json:"memory"`
	Queues       []string  `json:"queues"`
	Tables       ReadWrite `json:"tables"`
	Coordination bool      `json:"coordination"`
	Cache        Tier      `json:"cache"`
	Frame        Tier      `json:"frame"`
}

// Tier is a disposable tier's allowance.
type Tier struct {
	Allowed  bool  `json:"allowed"`
	MaxBytes int64 `json:"max_bytes"`
}

// Explain says what agent may do under the policy.
func (p *Policy) Explain(agent string) Explanation {
	e := Explanation{Agent: agent, Roles: []string{}, Rules: []ExplainedRule{}}
	if p == nil {
		e.NoPolicy, e.Default = true, Allow
		return e
	}
	e.Default = p.Default
	roles := make([]string, 0, len(p.Roles))
	for r := range p.Roles {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	for _, r := range roles {
		if matchAny(p.Roles[r], agent) {
			e.Roles = append(e.Roles, r)
		}
	}
	for i := range p.Rules {
		r := &p.Rules[i]
		if p.names(r, agent) {
			e.Rules = append(e.Rules, ExplainedRule{Rule: ruleLabel(i, r), Effect: r.Effect, Paths: r.Paths})
		}
	}
	pr, by := p.ProfileOf(agent)
	if pr == nil {
		return e
	}
	orEmpty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	cacheOK, cacheMax := pr.CacheAllowed()
	frameOK, frameMax := pr.FrameAllowed()
	e.Profile = &ExplainedProfile{
		Name: pr.name, Preset: pr.preset, AssignedBy: by,
		Documents:    ReadWrite{Read: orEmpty(pr.Documents.Read), Write: orEmpty(pr.Documents.Write)},
		Memory:       orEmpty(pr.Memory),
		Queues:       orEmpty(pr.Queues),
		Tables:       ReadWrite{Read: orEmpty(pr.Tables.Read), Write: orEmpty(pr.Tables.Write)},
		Coordination: pr.Coordination,
		Cache:        Tier{Allowed: cacheOK, MaxBytes: cacheMax},
		Frame:        Tier{Allowed: frameOK, MaxBytes: frameMax},
	}
	return e
}
