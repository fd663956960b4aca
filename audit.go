package aiwgstate

func (s *Store) indexCommit(m *Mutation, changes []Change) error { return nil }
