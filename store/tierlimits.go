package store

// Defaults of the disposable tiers' bounds (Limits.MaxFrameBytes,
// Limits.MaxCacheBytes) when the manifest leaves them out.
const (
	DefaultMaxFrameBytes = 1 << 20  // one run's scratch values
	DefaultMaxCacheBytes = 64 << 20 // the cache, on each machine
)

// TierLimits are the manifest's limits on the default branch (that of
// the policy in force, PolicyHead: never the branch a command opened, or
// an agent could pick an old manifest's looser limits), with the
// disposable tiers' defaults filled in: what a frame or the cache is held
// to. A store whose manifest cannot be read is held to the defaults.
func (s *Store) TierLimits() Limits {
	m := Manifest{Limits: defaultLimits}
	if head, err := s.PolicyHead(); err == nil && !head.IsZero() {
		if mm, err := s.manifestAt(s.TreeOf(head)); err == nil {
			m = mm
		}
	}
	if m.Limits.MaxFrameBytes <= 0 {
		m.Limits.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if m.Limits.MaxCacheBytes <= 0 {
		m.Limits.MaxCacheBytes = DefaultMaxCacheBytes
	}
	return m.Limits
}
