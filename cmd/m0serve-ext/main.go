// Command m0serve-ext is m0serve built as a CPython extension module
// (go build -buildmode=c-shared): m0serve/_m0serve.<abi>.so in the
// wheel, which the user's own interpreter imports. module.c is its
// PyInit__m0serve; its main(argv) releases the GIL and calls Main here,
// on the interpreter's main thread, until the server stops. Everything
// else is package cli's, as in cmd/m0serve; pybridge adopts the running
// interpreter (cli.Hosted) instead of starting one.
//
// The library does not link libpython: the Python C API resolves from
// the process that loads it (packaging/setup.py builds it).
package main

/*
#cgo pkg-config: python3-embed
#cgo CFLAGS: -Wall -Wextra -Werror -O2
*/
import "C"

import (
	"os"
	"unsafe"

	"github.com/m0serve/m0serve/cli"
)

// main is never called: a c-shared library starts from module.c.
func main() {}

// m0extMain runs the command line args (without the program's name) in
// the interpreter whose sys.executable is python and sys.prefix prefix,
// and returns the exit status. The calling thread holds no GIL.
//
//export m0extMain
func m0extMain(argv **C.char, argc C.int, python, prefix *C.char) C.int {
	args := make([]string, int(argc))
	for i, p := range unsafe.Slice(argv, int(argc)) {
		args[i] = C.GoString(p)
	}
	cli.Hosted(C.GoString(python), C.GoString(prefix))
	return C.int(cli.Main(args, os.Stdout, os.Stderr))
}
