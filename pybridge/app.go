package pybridge

/*
#include "shim.h"
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// Interface is the protocol an application speaks.
type Interface uint8

const (
	WSGI Interface = iota + 1 // PEP 3333: app(environ, start_response)
	ASGI                      // ASGI 3.0: async app(scope, receive, send)
)

func (i Interface) String() string {
	switch i {
	case WSGI:
		return "wsgi"
	case ASGI:
		return "asgi"
	}
	return "unknown"
}

// AppSpec names an application and the fixed parts of its environ.
type AppSpec struct {
	// Target is "module:attr"; attr may be dotted, and "module:make()"
	// calls make with no arguments to get the app. A bare "module"
	// serves its application, else its app (gunicorn's and uvicorn's
	// defaults).
	Target string
	// Factory calls the attribute with no arguments to get the app, as a
	// trailing "()" does.
	Factory bool
	// RootPath is SCRIPT_NAME: the prefix the app is mounted under ("" for
	// the root; a trailing slash is dropped). WSGI: it is stripped from
	// PATH_INFO under it by whole segments: /app/x and /app, not /appx.
	// ASGI: the scope's path and raw_path are it followed by the target,
	// as uvicorn's (the proxy in front stripped it), unless RootInPath.
	RootPath string
	// RootInPath says the targets it serves hold RootPath already (a
	// mount routed by it, not a proxy that stripped it): ASGI's path is
	// the target as sent. WSGI strips it from PATH_INFO either way.
	RootInPath bool
	// ServerName and ServerPort fill SERVER_NAME and SERVER_PORT.
	ServerName string
	ServerPort int
	// URLScheme is wsgi.url_scheme: "http" when empty.
	URLScheme string
	// ServerSoftware is SERVER_SOFTWARE ("m0serve/0.4.0", CGI's
	// name/version); absent from the environ when empty.
	ServerSoftware string
	// MultiThread and MultiProcess fill wsgi.multithread and
	// wsgi.multiprocess: more than one handler thread, more than one
	// worker process.
	MultiThread, MultiProcess bool
}

// App is a loaded application and its environ template.
type App struct {
	c         *C.m0_app
	spec      AppSpec
	Interface Interface
	// asgiIndex is the app's place in the ASGI executor's table
	// (ASGIOptions.Mounted), set as it starts.
	asgiIndex int
}

// Spec returns what the app was loaded from; a Target given without
// ":attr" has the attribute found added.
func (a *App) Spec() AppSpec { return a.spec }

// LoadApp imports the application. A Python error (the module does not
// import, the attribute is missing, the factory raised) comes back as a
// *LoadError whose text is the Python traceback; a target that names no
// app (a bare module with neither default attribute, a factory function
// without Factory) as a one-line *TargetError.
func (ip *Interpreter) LoadApp(spec AppSpec) (*App, error) {
	if spec.URLScheme == "" {
		spec.URLScheme = "http"
	}
	// "/app/" mounts at /app: with the slash kept, /app/x would not match
	// it segment by segment, and /app would not be under it.
	spec.RootPath = strings.TrimRight(spec.RootPath, "/")
	if spec.RootPath != "" && spec.RootPath[0] != '/' {
		return nil, fmt.Errorf("pybridge: root path %q must start with /", spec.RootPath)
	}
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.closed {
		return nil, errors.New("pybridge: interpreter closed")
	}
	target := C.CString(spec.Target)
	root := C.CString(spec.RootPath)
	name := C.CString(spec.ServerName)
	scheme := C.CString(spec.URLScheme)
	software := C.CString(spec.ServerSoftware)
	defer func() {
		for _, p := range []*C.char{target, root, name, scheme, software} {
			C.free(unsafe.Pointer(p))
		}
	}()
	var result C.m0_load_result
	c := C.m0_app_load(target, cBool(spec.Factory), root, name, C.int(spec.ServerPort),
		scheme, software, cBool(spec.MultiThread), cBool(spec.MultiProcess), &result)
	if c == nil {
		if result.mistake != nil {
			return nil, &TargetError{Target: spec.Target, Reason: takeText(result.mistake)}
		}
		return nil, &LoadError{Target: spec.Target, Python: takeText(result.error), Missing: takeText(result.missing)}
	}
	if result.found != nil {
		// "application", or a submodule's ".asgi:application".
		if found := C.GoString(result.found); strings.HasPrefix(found, ".") {
			spec.Target += found
		} else {
			spec.Target += ":" + found
		}
	}
	if spec.RootInPath {
		c.root_in_path = 1
	}
	app := &App{c: c, spec: spec, Interface: WSGI}
	if c.is_asgi != 0 {
		app.Interface = ASGI
	}
	ip.apps = append(ip.apps, app)
	return app, nil
}

// LoadError is an application that failed to load; Python holds the
// formatted exception, traceback included.
type LoadError struct {
	Target string
	Python string
	// Missing is the module a ModuleNotFoundError names ("" for another
	// exception): the app's own, or one it imports.
	Missing string
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("cannot load the application %s:\n%s", e.Target, e.Python)
}

// TargetError is a target that imports but does not name an app.
type TargetError struct {
	Target string
	Reason string
}

func (e *TargetError) Error() string { return e.Reason }

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
