package trajectory

import _ "embed"

//go:embed trajectory.schema.json
var schemaJSON []byte

// SchemaJSON returns the JSON Schema (2020-12) of the RLM trajectories
// specification, which every stored trajectory and iteration meets.
func SchemaJSON() []byte { return append([]byte(nil), schemaJSON...) }
