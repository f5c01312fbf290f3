package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// parseArgs sets the flags in args and returns the arguments that are not
// flags. Unlike flag.FlagSet.Parse it does not stop at the first of those:
// flags may come before or after module:attr, as uvicorn and Granian take
// them. "--" ends the flags. Errors name the flag as it was typed.
func parseArgs(fs *flag.FlagSet, args []string) (positional []string, err error) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return append(positional, args[i+1:]...), nil
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		name := strings.TrimPrefix(arg[1:], "-")
		name, value, hasValue := strings.Cut(name, "=")
		typed := arg
		if hasValue {
			typed = arg[:len(arg)-len(value)-1]
		}
		if name == "" || name[0] == '-' {
			return nil, fmt.Errorf("%s: not a flag", arg)
		}
		if long, ok := shortNames[name]; ok {
			name = long
		}
		if name == "help" {
			return nil, flag.ErrHelp
		}
		f := fs.Lookup(name)
		if target, implied, ok := peerSpellingFor(name); f == nil && ok {
			if implied != "" && hasValue {
				return nil, fmt.Errorf("%s takes no value (it is --%s=%s)", typed, target, implied)
			}
			f = fs.Lookup(target)
			if implied != "" {
				value, hasValue = implied, true
			}
		}
		if f == nil {
			return nil, unknownFlag(fs, typed, name)
		}
		if isBool(f) {
			if !hasValue {
				value = "true"
				// "--access-log on" would serve a module named on.
				if i+1 < len(args) && isBoolWord(args[i+1]) {
					return nil, fmt.Errorf("%s %s: write %s=%s (a boolean flag takes its value after =)", typed, args[i+1], typed, args[i+1])
				}
			}
		} else if !hasValue {
			if i+1 == len(args) {
				return nil, fmt.Errorf("%s: wants a value", typed)
			}
			i++
			value = args[i]
		}
		if err := setFlag(fs, f, value); err != nil {
			return nil, fmt.Errorf("%s %q: %v", typed, value, err)
		}
	}
	return positional, nil
}

// setFlag sets f, taking for a boolean flag the words people write in
// configuration (yes/no, on/off, 1/0, true/false, any case), and only
// those: strconv.ParseBool's "t" and "F" read as typing mistakes.
func setFlag(fs *flag.FlagSet, f *flag.Flag, value string) error {
	if isBool(f) {
		word, ok := boolWords[strings.ToLower(value)]
		if !ok {
			return errors.New("want true or false (or yes/no, on/off, 1/0)")
		}
		value = word
	}
	err := fs.Set(f.Name, value)
	if err != nil && err.Error() == "parse error" {
		// The flag package's word for a number that does not parse.
		return errors.New("want a whole number")
	}
	return err
}

var boolWords = map[string]string{
	"1": "true", "true": "true", "yes": "true", "on": "true",
	"0": "false", "false": "false", "no": "false", "off": "false",
}

func isBoolWord(s string) bool {
	_, ok := boolWords[strings.ToLower(s)]
	return ok
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// unknownFlag is the error for a flag that is not defined, with the
// nearest defined one when the name looks like a typing mistake of it.
func unknownFlag(fs *flag.FlagSet, typed, name string) error {
	if pointer, ok := peerFlags[name]; ok {
		return fmt.Errorf("unknown flag %s; %s", typed, pointer)
	}
	if near := nearestFlag(fs, name); near != "" {
		return fmt.Errorf("unknown flag %s; did you mean --%s?", typed, near)
	}
	if near := nearestPeerSpelling(name); near != "" {
		return fmt.Errorf("unknown flag %s; did you mean --%s?", typed, near)
	}
	return fmt.Errorf("unknown flag %s", typed)
}

// nearestFlag is the defined flag closest to name by edit distance (a
// swap of two neighbouring letters counting as one edit) if it is close
// enough to be what was meant, else the one flag that name starts or that
// starts name ("max-body", "access-logfile"); else "".
func nearestFlag(fs *flag.FlagSet, name string) string {
	best, bestDistance := "", len(name)
	var prefixed []string
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestDistance {
			best, bestDistance = f.Name, d
		}
		if len(name) >= 3 && strings.HasPrefix(f.Name, name) || len(f.Name) >= 4 && strings.HasPrefix(name, f.Name) {
			prefixed = append(prefixed, f.Name)
		}
	})
	// Two edits in a name of four letters or more is a slip ("prot",
	// "acess-log"); more, or two in a shorter name, is another word.
	if best != "" && (bestDistance == 1 || bestDistance == 2 && len(name) >= 4) {
		return best
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of neighbours.
func editDistance(a, b string) int {
	// Three rows of the dynamic programme: two back, one back, this one.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// quoteAll quotes each argument: "a:b", "c:d".
func quoteAll(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(quoted, ", ")
}
