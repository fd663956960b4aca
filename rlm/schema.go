package rlm

import _ "embed"

//go:embed state.schema.json
var stateSchemaJSON []byte

// StateSchema returns the JSON Schema (2020-12) of the RLM state
// specification, which exports validate against.
func StateSchema() []byte { return append([]byte(nil), stateSchemaJSON...) }
