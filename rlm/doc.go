// Package rlm is the domain of the RLM State Schema: variables
// and their eight types, scopes and where each lives in the store's tree,
// the specification's limits, large values kept in a file beside their variable, and
// the export document that conforms to the specification's schema.
//
// It knows JSON and store paths, not git: the root package reads and writes
// the files through the store's transactions, and derives history and
// checkpoints from commits and tags.
package rlm
