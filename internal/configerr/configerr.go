// Package configerr is a configuration mistake, as cli reports it: one
// line naming the flag, exit status 2. Package server's checks and the
// master's (package supervisor, which does not import server) both return
// it.
package configerr

// Error is a configuration mistake: the flag (without its dashes; empty
// for the positional application) and why.
type Error struct {
	Flag   string
	Reason string
}

func (e *Error) Error() string {
	if e.Flag == "" {
		return e.Reason
	}
	return "--" + e.Flag + ": " + e.Reason
}
