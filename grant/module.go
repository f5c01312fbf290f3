package grant

import _ "embed"

// Source is grant.py, the module an application issues grants with
// (`from m0serve import grant`): the wheel ships the file, and
// bin/m0serve, which has no m0serve package on its path, provides it
// from here.
//
//go:embed grant.py
var Source string
