package store

// Defaults of the disposable tiers' bounds (Limits.MaxFrameBytes,
// Limits.MaxCacheBytes) when the manifest leaves them out.
const (
	DefaultMaxFrameBytes = 1 << 20  // one run's scratch values
	DefaultMaxCacheBytes = 64 << 20 // the cache, on each machine
)

// TierLimits are the manifest's limits on the default branch, with the
// disposable tiers' defaults filled in: what a frame or the cache is held
// to. A store whose manifest cannot be read is held to the defaults.
func (s *Store) TierLimits() Limits {
	m := Manifest{Limits: defaultLimits}
	if root, err := s.Tree(ReadOptions{}); err == nil {
		if mm, err := s.manifestAt(root); err == nil {
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
