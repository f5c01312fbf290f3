package cli

import (
	"flag"
	"fmt"
	"strings"
)

// checkBindConflict refuses -b/--bind given with a flag of the address it
// sets (--host, --port, --uds, --fd) on the command line: which one was
// meant cannot be told, and taking the later one silently serves
// elsewhere than one of them says. (An M0_ variable under a flag is the
// usual precedence, not a conflict.)
func checkBindConflict(fs *flag.FlagSet, args []string) error {
	bind, other := "", ""
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
		if long, ok := shortNames[name]; ok {
			name = long
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		typed := arg
		if hasValue {
			typed, _, _ = strings.Cut(arg, "=")
		}
		switch name {
		case "bind":
			bind = typed
		case "host", "port", "uds", "fd":
			other = typed
		}
		if !hasValue && !isBool(f) {
			i++ // its value
		}
	}
	if bind != "" && other != "" {
		return fmt.Errorf("%s and %s: one address, given once: -b HOST:PORT (or unix:PATH, fd://N) alone, or --host and --port", bind, other)
	}
	return nil
}
