// Package errkind makes errors that belong to a kind (a sentinel such as
// "not found") without saying so in their text. fmt.Errorf's %w would end
// "no store here (run aiwg-state init): not found", repeating in a
// sentinel's words what the message already said in its own; here the
// message stands alone, and errors.Is still finds the kind, so the exit
// code and --json's code are unchanged.
package errkind

import "fmt"

type kinded struct {
	msg  string
	kind error
	err  error // a cause wrapped with %w in the format, or nil
}

func (e *kinded) Error() string { return e.msg }

func (e *kinded) Unwrap() []error {
	if e.err == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.err}
}

// Errorf formats an error of kind whose text is the format's alone. A %w
// in the format wraps its operand as fmt.Errorf does.
func Errorf(kind error, format string, a ...any) error {
	wrapped := fmt.Errorf(format, a...)
	return &kinded{msg: wrapped.Error(), kind: kind, err: unwrapOne(wrapped)}
}

// unwrapOne is what fmt.Errorf's error wraps: nil without a %w.
func unwrapOne(err error) error {
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		return e.Unwrap()
	case interface{ Unwrap() []error }:
		// Several %w: keep them all, as one error.
		return joined(e.Unwrap())
	}
	return nil
}

type joined []error

func (j joined) Error() string   { return fmt.Sprint([]error(j)) }
func (j joined) Unwrap() []error { return j }
