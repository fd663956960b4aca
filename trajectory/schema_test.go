package trajectory

import (
	"errors"
	"strings"
	"testing"
)

func TestSeedExamplesValidate(t *testing.T) {
	s := loadSchema(t)
	for _, name := range []string{"successful_trajectory", "failed_trajectory"} {
		doc := loadExample(t, name)
		if err := s.ValidateTrajectory(doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		_, its, err := Split(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, it := range its {
			if err := s.ValidateIteration(it); err != nil {
				t.Errorf("%s iteration %d: %v", name, i+1, err)
			}
		}
	}
}

func TestInvalidDocumentsNameTheField(t *testing.T) {
	s := loadSchema(t)
	valid := `{"iteration_number": 1, "thought": {"type": "goal", "content": "c"},
		"action": {"tool": "Grep", "description": "d"}, "observation": {"status": "success", "result": "r"}}`
	cases := []struct {
		name, replace, with, field string
	}{
		{"thought type outside the enum", `"type": "goal"`, `"type": "musing"`, "thought.type"},
		{"missing thought content", `, "content": "c"`, ``, "thought.content"},
		{"missing action", `"action": {"tool": "Grep", "description": "d"},`, ``, "action"},
		{"observation status outside the enum", `"status": "success"`, `"status": "ok"`, "observation.status"},
		{"result of the wrong type", `"result": "r"`, `"result": 42`, "observation.result"},
		{"iteration number below 1", `"iteration_number": 1`, `"iteration_number": 0`, "iteration_number"},
		{"bad timestamp format", `"iteration_number": 1`, `"iteration_number": 1, "timestamp": "yesterday"`, "timestamp"},
		{"negative tokens", `"iteration_number": 1`, `"iteration_number": 1, "cost": {"input_tokens": -1}`, "cost.input_tokens"},
		{"confidence above 1", `"content": "c"`, `"content": "c", "confidence": 1.5`, "thought.confidence"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(valid, c.replace, c.with, 1)
			if src == valid {
				t.Fatal("the case changes nothing")
			}
			err := s.ValidateIteration(mustDecode(t, src))
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("want a ValidationError, got %v", err)
			}
			if ve.Field != c.field {
				t.Fatalf("field %q, want %q (%v)", ve.Field, c.field, err)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Fatalf("message does not name the field: %v", err)
			}
		})
	}
	if err := s.ValidateIteration(mustDecode(t, valid)); err != nil {
		t.Fatalf("the valid iteration: %v", err)
	}
}

func TestTrajectoryRules(t *testing.T) {
	s := loadSchema(t)
	cases := []struct {
		doc, field string
	}{
		{`{"version": "1.0.0", "trajectory_id": "traj-0000000g", "task_context": {"task_id": "task-00000001", "task_type": "t", "task_prompt": "p"}}`, "trajectory_id"},
		{`{"version": "2.0.0", "trajectory_id": "traj-00000001", "task_context": {"task_id": "task-00000001", "task_type": "t", "task_prompt": "p"}}`, "version"},
		{`{"version": "1.0.0", "trajectory_id": "traj-00000001", "task_context": {"task_id": "task-001", "task_type": "t", "task_prompt": "p"}}`, "task_context.task_id"},
		{`{"version": "1.0.0", "trajectory_id": "traj-00000001", "task_context": {"task_id": "task-00000001", "task_prompt": "p"}}`, "task_context.task_type"},
		{`{"version": "1.0.0", "trajectory_id": "traj-00000001", "task_context": {"task_id": "task-00000001", "task_type": "t", "task_prompt": "p"}, "outcome": {"status": "won"}}`, "outcome.status"},
		{`{"version": "1.0.0", "trajectory_id": "traj-00000001", "task_context": {"task_id": "task-00000001", "task_type": "t", "task_prompt": "p"}, "iterations": [{"iteration_number": 1}]}`, "iterations.0.thought"},
	}
	for _, c := range cases {
		var ve *ValidationError
		if err := s.ValidateTrajectory(mustDecode(t, c.doc)); !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s: got %v, want field %s", c.doc, err, c.field)
		}
	}
	// The nullable repair: null ids are allowed, as the specification's nullable meant.
	ok := `{"version": "1.0.0", "trajectory_id": "traj-00000001", "task_context": {"task_id": "task-00000001", "task_type": "t", "task_prompt": "p", "tree_id": null, "state_id": null, "parent_task_id": null}}`
	if err := s.ValidateTrajectory(mustDecode(t, ok)); err != nil {
		t.Errorf("null ids: %v", err)
	}
}
