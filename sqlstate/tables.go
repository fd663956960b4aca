package sqlstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/aiwg/aiwg-state/merge/jsonmerge"
	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/store"
)

// TablesDir holds agent tables' declarations, one NAME.json each;
// RowsDir holds their rows, RowsDir/NAME/ROWID.json.
const (
	TablesDir = ".aiwg/tables"
	RowsDir   = "tables"
)

// Column types of an agent table, and what a row's JSON holds for each.
const (
	TypeText    = "text"    // a JSON string
	TypeInteger = "integer" // a JSON number without a fraction
	TypeReal    = "real"    // a JSON number
	TypeBoolean = "boolean" // true or false (0 or 1 in SQL)
	TypeJSON    = "json"    // any JSON value (its text in SQL)
)

// Schema declares an agent table: its columns, in order. Every table also
// has the column id, its row's file name (tables/NAME/ID.json).
type Schema struct {
	Description string   `json:"description,omitempty"`
	Columns     []Column `json:"columns"`
}

// Column is one column of an agent table. Merge, when set, is the merge
// strategy that settles the column when two branches changed it
// (max, sum, first-write-wins...); table create writes it into
// .gitattributes for the table's rows.
type Column struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Merge string `json:"merge,omitempty"`
}

var (
	tableName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
	rowID     = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
)

// reservedColumns are SQLite's names for a table's rowid, and the row id.
var reservedColumns = map[string]bool{"id": true, "rowid": true, "oid": true, "_rowid_": true}

// ParseSchema reads and checks a table's declaration.
func ParseSchema(name string, data []byte) (*Schema, error) {
	if err := checkTableName(name); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Schema
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: table %s: schema: %v (want {\"columns\": [{\"name\": ..., \"type\": \"text|integer|real|boolean|json\"}]})", store.ErrUsage, name, err)
	}
	if len(s.Columns) == 0 || len(s.Columns) > 200 {
		return nil, fmt.Errorf("%w: table %s: a schema has 1 to 200 columns", store.ErrUsage, name)
	}
	seen := map[string]bool{}
	for _, c := range s.Columns {
		if !tableName.MatchString(c.Name) || reservedColumns[c.Name] {
			return nil, fmt.Errorf("%w: table %s: column %q: a column is lower-case letters, digits and _, starting with a letter, and not id, rowid or oid", store.ErrUsage, name, c.Name)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("%w: table %s: column %s twice", store.ErrUsage, name, c.Name)
		}
		seen[c.Name] = true
		switch c.Type {
		case TypeText, TypeInteger, TypeReal, TypeBoolean, TypeJSON:
		default:
			return nil, fmt.Errorf("%w: table %s: column %s: type %q (want text, integer, real, boolean or json)", store.ErrUsage, name, c.Name, c.Type)
		}
		if c.Merge != "" {
			if _, err := jsonmerge.ParseStrategy(c.Merge); err != nil {
				return nil, fmt.Errorf("table %s: column %s: %w", name, c.Name, err)
			}
		}
	}
	return &s, nil
}

func checkTableName(name string) error {
	if !tableName.MatchString(name) || strings.HasPrefix(name, "sqlite_") || strings.HasPrefix(name, "aiwg_") || strings.HasPrefix(name, "pragma_") || isMirrored(name) || readableSystem[name] {
		return fmt.Errorf("%w: table name %q: lower-case letters, digits and _, starting with a letter, at most 63, and none of the mirrored tables' names or sqlite_, pragma_, aiwg_", store.ErrUsage, name)
	}
	return nil
}

// ddl is the SQLite table that mirrors the agent table: STRICT, so SQLite
// itself refuses a value of the wrong type in a statement.
func (s *Schema) ddl(name string) string {
	var b strings.Builder
	// A row inserted without an id gets one as objects.NewID makes them.
	fmt.Fprintf(&b, "CREATE TABLE %q (id TEXT PRIMARY KEY DEFAULT ('row-' || lower(hex(randomblob(4))))", name)
	for _, c := range s.Columns {
		switch c.Type {
		case TypeText:
			fmt.Fprintf(&b, ", %q TEXT", c.Name)
		case TypeInteger:
			fmt.Fprintf(&b, ", %q INTEGER", c.Name)
		case TypeReal:
			fmt.Fprintf(&b, ", %q REAL", c.Name)
		case TypeBoolean:
			fmt.Fprintf(&b, ", %q INTEGER CHECK (%q IN (0, 1))", c.Name, c.Name)
		case TypeJSON:
			fmt.Fprintf(&b, ", %q TEXT CHECK (json_valid(%q))", c.Name, c.Name)
		}
	}
	b.WriteString(") STRICT")
	return b.String()
}

// rowValues turns a row's document into the table's column values (id
// first); a value of the wrong type is a problem, and its column NULL.
func (s *Schema) rowValues(id string, data []byte) ([]any, []string, error) {
	doc, err := objects.Decode(data)
	if err != nil {
		return nil, nil, err
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("a row is a JSON object, not %s", objects.KindOf(doc))
	}
	vals := []any{id}
	var problems []string
	for _, c := range s.Columns {
		v, present := obj[c.Name]
		if !present || v == nil {
			vals = append(vals, nil)
			continue
		}
		sv, err := toSQL(c.Type, v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("column %s: %v", c.Name, err))
		}
		vals = append(vals, sv)
	}
	for k := range obj {
		if !s.has(k) {
			problems = append(problems, fmt.Sprintf("key %s is no column", k))
		}
	}
	return vals, problems, nil
}

func (s *Schema) has(col string) bool {
	for _, c := range s.Columns {
		if c.Name == col {
			return true
		}
	}
	return false
}

func toSQL(typ string, v any) (any, error) {
	switch typ {
	case TypeText:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case TypeInteger:
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i, nil
			}
		}
	case TypeReal:
		if n, ok := v.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				return f, nil
			}
		}
	case TypeBoolean:
		if b, ok := v.(bool); ok {
			if b {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case TypeJSON:
		return encode(v), nil
	}
	return nil, fmt.Errorf("%s where the column holds %s", objects.KindOf(v), typ)
}

// rowDocument is a row's file: its columns that are not NULL, as JSON.
func (s *Schema) rowDocument(vals []any) ([]byte, error) {
	obj := map[string]any{}
	for i, c := range s.Columns {
		jv, err := columnJSON(c, vals[i])
		if err != nil {
			return nil, err
		}
		if jv != nil {
			obj[c.Name] = jv
		}
	}
	return objects.Encode(obj)
}

// columnJSON is a column's SQL value as the JSON its row's file holds
// (nil for NULL: the key is left out).
func columnJSON(c Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch c.Type {
	case TypeText:
		return fmt.Sprint(asString(v)), nil
	case TypeInteger:
		i, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("column %s: %v is not an integer", c.Name, v)
		}
		return json.Number(strconv.FormatInt(i, 10)), nil
	case TypeReal:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		default:
			return nil, fmt.Errorf("column %s: %v is not a number", c.Name, v)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("column %s: %v is no JSON number", c.Name, f)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case TypeBoolean:
		i, _ := v.(int64)
		return i != 0, nil
	case TypeJSON:
		d, err := objects.Decode([]byte(asString(v)))
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		return d, nil
	}
	return nil, fmt.Errorf("column %s: type %s", c.Name, c.Type)
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// SchemaPath and RowPath are where a table's declaration and a row live.
func SchemaPath(name string) string  { return TablesDir + "/" + name + ".json" }
func RowPath(name, id string) string { return RowsDir + "/" + name + "/" + id + ".json" }
func validRowID(id string) bool      { return rowID.MatchString(id) && !strings.HasSuffix(id, ".json") }

// attributesLine is the .gitattributes line that gives the table's rows
// their columns' merge strategies ("" when no column names one): rows
// merge key by key, and a column's clash is settled by its strategy.
func (s *Schema) attributesLine(name string) string {
	var keys []string
	for _, c := range s.Columns {
		if c.Merge != "" {
			keys = append(keys, c.Name+":"+c.Merge)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	return fmt.Sprintf("%s/%s/*.json merge=%s%s %s=%s -%s", RowsDir, name, jsonmerge.DriverPrefix, jsonmerge.MergeObjects,
		jsonmerge.AttrKeys, strings.Join(keys, ","), jsonmerge.AttrFallback)
}
