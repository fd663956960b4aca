// Package policy is the store's access policy: which agents may write which
// paths of the store. It answers one question, "may agent A write path P?",
// the same way wherever a write is checked: in-process before every commit,
// by the server-side hook on every pushed commit, and by `aiwg-state policy
// check` on a local revision.
//
// # The file
//
// The policy is the store file .aiwg/policy.json (canonical JSON, versioned
// like any other file, so a change of policy is itself a commit that the
// policy in force must allow):
//
//	{
//	  "default": "deny",
//	  "require_signed": false,
//	  "roles": {
//	    "coordinator": ["conductor"],
//	    "workers": ["pulse", "heartbeat", "dream_weaver", "worker-*"]
//	  },
//	  "rules": [
//	    {"name": "coordinator writes all", "roles": ["coordinator"], "paths": ["**"]},
//	    {"name": "no one else touches the store's settings", "agents": ["*"], "paths": [".aiwg/**", ".gitattributes"], "effect": "deny"},
//	    {"name": "guardian writes health", "agents": ["guardian"], "paths": ["global/health/**"]},
//	    {"name": "only own sessions", "roles": ["workers"], "paths": ["agents/{agent}/**"]},
//	    {"name": "only own locks", "agents": ["*"], "paths": ["locks/{agent}/**"]}
//	  ]
//	}
//
// Subjects: "agents" lists agent ids or glob patterns over ids ('*' any run
// of characters, '?' one, [a-z] a class, as path.Match); "roles" names roles,
// and a role's members are ids or glob patterns too. The agent of a commit is
// its author name, which is what aiwg-state writes for --agent.
//
// Paths are gitattributes(5) patterns (verbiage.CompilePattern), matched
// against store file paths. The placeholder {agent} stands for the agent
// being checked, with its glob characters escaped: "agents/{agent}/**" gives
// every agent its own subtree and no one else's; this is the swarm shared state specification's "only own
// sessions" and "only own locks". An agent id holding '/' or being "." or
// ".." never matches a rule with {agent}, so it cannot reach into another
// agent's subtree.
//
// # Evaluation order
//
// Rules are read in file order and the first rule that names the agent (by
// id, pattern or role) and matches the path decides: "effect": "allow" (the
// default) or "deny". When no rule decides, "default" does: "deny" unless
// the file says "allow". A store without a policy file allows every write.
// Put narrow denials before broad grants.
//
// Reads are not governed by the rules: whoever can fetch a git repository
// can read all of it. A sandbox profile bounds the reads of an agent that
// goes through aiwg-state (the MCP server, a served or attributed CLI
// command), which is where a sandboxed agent is.
//
// # Signatures
//
//	"require_signed": ["role:workers", "planner"],
//	"signers": {
//	  "pulse": ["ssh-ed25519 AAAAC3Nza… pulse@host"],
//	  "planner": ["ssh-ed25519 AAAAC3Nza…", "ecdsa-sha2-nistp256 AAAAE2Vj…"]
//	}
//
// "signers" lists, per agent id (exactly, no patterns), the SSH public keys
// its commits may be signed with, one key per entry as in authorized_keys,
// without options; a key belongs to one agent. "require_signed" is false
// (the default), true (every agent) or a list of agent ids, patterns and
// "role:NAME". A commit whose author must sign is taken only with a
// signature that verifies: when the policy lists signers, an SSH signature
// (git's gpg.format=ssh) made with a key listed for that author, checked
// in-process; otherwise, and for OpenPGP signatures, what git
// verify-commit accepts with the receiving side's keys. The hook and
// `policy check` apply it to received commits; an in-process write of an
// agent that must sign fails unless a signing key is configured for it and,
// with signers, is one listed for it (see the root package's
// WriteOptions.SigningKey).
//
// # Pushers and roles with a meaning
//
// "pushers" maps the identities a server authenticates (an HTTP user, an
// SSH key's name) to the agents they may act as, and to the roles
// "integrator" and "lease_admin":
//
//	"pushers": {
//	  "alice-key": {"agents": ["alice"]},
//	  "ci": {"agents": ["conductor"], "roles": ["integrator"]}
//	},
//	"require_pusher": true
//
// A server's hook then refuses a commit authored or committed as an agent
// the pusher may not act as, a move of agents/<id>/* by a pusher that may
// not act as id, and bringing other agents' work the default branch does
// not have onto a branch (a merge, a fast-forward) unless the pusher is an
// integrator. With pushers named, a push whose pusher the server does not
// know is refused, unless "require_pusher" is false. "lease_admin" (a
// pusher's, or an agent's in "roles") may force-release other agents'
// leases; without it, only the holder releases its lease. A policy without
// pushers checks no pusher.
//
// # Sandbox profiles
//
// "profiles" and "sandbox" bound what an agent may use, per tier of state:
// documents (paths it may read and write), memory namespaces, queues, SQL
// tables (read, write), coordination (events and leases), the cache and
// the frame (allowed, and a size). The first "sandbox" entry that names an
// agent gives its profile, one the store declares or a preset of the
// tiered state specification: minimal (the frame alone),
// compute-and-store, network-restricted (with queues) and
// operator-controlled (everything). A write must pass both the rules and
// the profile; a refusal by the profile is a *ProfileError naming the
// profile and its rule (profile.go has the format).
//
// # Which policy is in force
//
// A write is judged by the policy of the state it changes, never by the
// policy it brings: in-process, the policy at the branch head before the
// write; on a server, the policy at the server's HEAD branch before the
// push. So a commit that edits .aiwg/policy.json is itself checked against
// the old policy.
//
// # A broken policy
//
// A policy that Parse refuses is never written by aiwg-state, nor accepted
// by the hook. One that is in force all the same (plain git, an older
// server) answers nothing, so it neither opens the store nor locks it:
// the only write accepted, in-process and by the hook, is one that changes
// .aiwg/policy.json alone, by an agent that the last policy of the first-
// parent history that parses lets write it (any agent when that history
// had no policy: the store was open then).
package policy
