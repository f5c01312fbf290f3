package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// baseEntrypoint is the ENTRYPOINT of the image the repository's
// Dockerfile builds, which a variant's Dockerfile inherits unless it
// sets its own.
var baseEntrypoint = []string{imageBinary}

// imageBinary is where that image has m0serve.
const imageBinary = "/usr/local/bin/m0serve"

// dockerfileName is TechEmpower's convention: the default test is
// <framework>.dockerfile, any other <framework>-<test>.dockerfile.
func dockerfileName(dir, framework, test string) string {
	if test == "default" {
		return filepath.Join(dir, framework+".dockerfile")
	}
	return filepath.Join(dir, framework+"-"+test+".dockerfile")
}

// dockerCommand reads a Dockerfile's ENTRYPOINT and CMD (exec form, the
// last of each) and returns the command the container runs: the
// entry point (the base image's when it sets none) and the CMD.
func dockerCommand(path string) (entrypoint, cmd []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	entrypoint = baseEntrypoint
	lines := bufio.NewScanner(f)
	for n := 1; lines.Scan(); n++ {
		line := strings.TrimSpace(lines.Text())
		instruction, rest, _ := strings.Cut(line, " ")
		var target *[]string
		switch strings.ToUpper(instruction) {
		case "ENTRYPOINT":
			target = &entrypoint
		case "CMD":
			target = &cmd
		default:
			continue
		}
		var words []string
		if err := json.Unmarshal([]byte(rest), &words); err != nil || len(words) == 0 {
			return nil, nil, fmt.Errorf("%s:%d: %s is not in exec form (a JSON array): %v", path, n, instruction, err)
		}
		*target = words
	}
	return entrypoint, cmd, lines.Err()
}

// serverCommand is a variant's command line with binary for the image's
// m0serve and extra (the address and app folder verify needs) before the
// CMD's arguments; an entry point such as ["/bin/sh", "-c", "exec
// /usr/local/bin/m0serve --workers \"$(nproc)\" \"$@\"", "m0serve"]
// gets them as its "$@". It also reports whether the command starts
// m0serve with --workers.
func serverCommand(entrypoint, cmd []string, binary string, extra []string) ([]string, bool) {
	var argv []string
	workers := false
	for _, word := range entrypoint {
		workers = workers || strings.Contains(word, "--workers")
		argv = append(argv, strings.ReplaceAll(word, imageBinary, binary))
	}
	argv = append(argv, extra...)
	for _, word := range cmd {
		workers = workers || word == "--workers" || strings.HasPrefix(word, "--workers=")
		argv = append(argv, word)
	}
	return argv, workers
}
