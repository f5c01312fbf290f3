// Command m0serve is the m0serve application server with CPython linked
// in. Everything it does is package cli's; this is only its entry.
package main

import (
	"os"

	"github.com/m0serve/m0serve/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
