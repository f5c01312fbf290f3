package realtime

import _ "embed"

// PublisherSource is m0pub.py, the module an app imports as
// `from m0serve import m0pub`: the wheel ships the file, and bin/m0serve,
// which has no m0serve package on its path, provides it from here.
//
//go:embed m0pub.py
var PublisherSource string
