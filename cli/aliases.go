package cli

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/m0serve/m0serve/server"
)

// peerSpelling is a uvicorn or Granian flag that means what one of
// m0serve's means: parseArgs reads it as that flag. A spelling with a
// value (--no-access-log is --access-log=false) takes none of its own.
type peerSpelling struct {
	flag, value string
}

// peerSpellings are the spellings people carry over from uvicorn and
// Granian (README, Coming from uvicorn or gunicorn). A flag of theirs
// that means something else is a pointer in peerFlags instead.
var peerSpellings = map[string]peerSpelling{
	// uvicorn
	"timeout-keep-alive":        {flag: "keepalive-timeout"},
	"timeout-graceful-shutdown": {flag: "graceful-timeout"},
	"limit-max-requests":        {flag: "max-requests"},
	"limit-max-requests-jitter": {flag: "max-requests-jitter"},
	"no-access-log":             {flag: "access-log", value: "false"},
	// Granian
	"ssl-certificate":  {flag: "ssl-certfile"},
	"url-path-prefix":  {flag: "root-path"},
	"workers-max-rss":  {flag: "max-worker-rss"},
	"workers-lifetime": {flag: "max-worker-lifetime"},
	"log-access":       {flag: "access-log", value: "true"},
	"no-log-access":    {flag: "access-log", value: "false"},
	"no-ws":            {flag: "ws", value: "none"},
}

// peerSpellingFor is the flag a peer's spelling name stands for, and the
// value it implies ("" when it takes one); ok is false for any other name.
func peerSpellingFor(name string) (flag, value string, ok bool) {
	s, ok := peerSpellings[name]
	return s.flag, s.value, ok
}

// nearestPeerSpelling is the peer spelling within two edits of name (one
// for a short name), or "": a slip in a flag carried over.
func nearestPeerSpelling(name string) string {
	best, bestDistance := "", 3
	for spelling := range peerSpellings {
		if d := editDistance(name, spelling); d < bestDistance || d == bestDistance && spelling < best {
			best, bestDistance = spelling, d
		}
	}
	if bestDistance == 1 || bestDistance == 2 && len(name) >= 4 {
		return best
	}
	return ""
}

// peerInterfaces are uvicorn's and Granian's --interface values that name
// one of m0serve's: ASGI 3 and ASGI 2 are both --interface asgi, and
// Granian's asginl is ASGI without lifespan.
var peerInterfaces = map[string]string{"asgi3": "asgi", "asgi2": "asgi", "asginl": "asgi"}

// applyPeerOptions applies what the flags set in fs say beyond m0serve's
// own flags: --env-file, then the peers' values (applyPeerValues).
func applyPeerOptions(fs *flag.FlagSet, options []option, cfg *server.Config) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := loadEnvFile(fs, options, given); err != nil {
		return err
	}
	return applyPeerValues(cfg, given)
}

// applyPeerValues reads the peers' values of m0serve's flags, once the
// flags and variables are set; given names the flags set.
func applyPeerValues(cfg *server.Config, given map[string]bool) error {
	value := strings.ToLower(cfg.Interface)
	if value == "rsgi" {
		return fmt.Errorf("--interface rsgi: Granian's own protocol is not served; a WSGI or ASGI app is (--interface auto, wsgi or asgi)")
	}
	if name, ok := peerInterfaces[value]; ok {
		cfg.Interface = name
		if value == "asginl" && !given["lifespan"] {
			cfg.Lifespan = "off"
		}
	}
	return nil
}

// peerSpellingsHelp is --help's last section: the peers' spellings read
// as m0serve's flags.
func peerSpellingsHelp() string {
	names := make([]string, 0, len(peerSpellings))
	for name := range peerSpellings {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("\nuvicorn's and Granian's spellings, read as m0serve's:\n")
	line := " "
	for _, name := range names {
		s := peerSpellings[name]
		item := " --" + name + " (--" + s.flag
		if s.value != "" {
			item += "=" + s.value
		}
		item += ")"
		if len(line)+len(item) > 100 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += item
	}
	b.WriteString(line + "\n")
	b.WriteString("  --interface asgi3, asgi2 (--interface asgi), asginl (asgi with --lifespan off)\n")
	return b.String()
}
