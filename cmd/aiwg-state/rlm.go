package main

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/aiwg/aiwg-state/objects"
	"github.com/aiwg/aiwg-state/rlm"
	"github.com/aiwg/aiwg-state/store"
	"github.com/aiwg/aiwg-state/verbiage"
)

func stateFlag() cli.Flag {
	return &cli.StringFlag{Name: "state", Usage: "the state (default: the newest state on the branch)", EnvVars: []string{"AIWG_STATE"}}
}

func rlmReadFlags() []cli.Flag  { return append(readFlags(), stateFlag()) }
func rlmWriteFlags() []cli.Flag { return append(writeFlags(), stateFlag()) }

// stateArg is the state named by an optional ID argument, else --state.
func stateArg(s *session, a []string) string {
	if len(a) > 0 {
		return a[0]
	}
	return s.c.String("state")
}

func previewValue(v any) string {
	b, _ := objects.Encode(v)
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func printVar(s *session, v *rlm.Variable) error {
	if s.json {
		return printJSON(s.out, v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out, err := objects.Canonical(raw)
	if err != nil {
		return err
	}
	_, err = s.out.Write(out)
	return err
}

func (s *session) warnNaming(name string) {
	for _, a := range verbiageAdvice(name) {
		s.warn(a)
	}
}

func (s *session) setVariable(name, arg string) error {
	data, err := readValue(s.c, arg)
	if err != nil {
		return err
	}
	text := string(data)
	if arg == "-" {
		text = strings.TrimSuffix(text, "\n")
	}
	var typ rlm.Type
	if t := s.c.String("type"); t != "" {
		if typ, err = rlm.ParseType(t); err != nil {
			return usagef("%v", err)
		}
	}
	value, typ, err := rlm.ParseValue(text, typ)
	if err != nil {
		return usagef("variable %s: %v", name, err)
	}
	vo := rlm.VarOptions{Type: typ, Scope: rlm.Scope(s.c.String("scope")), ReadOnly: s.c.Bool("read-only"), Description: s.c.String("description")}
	if s.c.IsSet("ttl") {
		d := time.Duration(s.c.Int64("ttl")) * time.Second
		vo.TTL = &d
	}
	res, err := s.store.States().SetVar(s.c.Context, s.c.String("state"), name, value, vo, s.writeOptions())
	if res != nil {
		for _, a := range res.Advice {
			s.warn(a)
		}
	} else if err == nil || errors.Is(err, store.ErrNoChange) {
		s.warnNaming(name)
	}
	if err != nil {
		return s.report(nil, err)
	}
	if s.json {
		return printJSON(s.out, res)
	}
	return s.report(res.Mutation, nil)
}

func verbiageAdvice(name string) []string { return verbiage.NamingAdvice(name) }

// stateOfArg reads the state named by the optional ID argument (or
// --state, or the newest).
func stateOfArg(s *session) (*rlm.StateInfo, error) {
	a, err := args(s.c, 0, 1)
	if err != nil {
		return nil, err
	}
	info, err := s.store.States().Get(s.c.Context, stateArg(s, a), s.readOptions())
	if err != nil {
		return nil, err
	}
	if err := s.mayReadState(s.c.Context, info.StateID); err != nil {
		return nil, err
	}
	return info, nil
}
