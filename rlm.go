package aiwgstate

func (s *Store) runCompletion(m *Mutation, changes []Change) error { return nil }
