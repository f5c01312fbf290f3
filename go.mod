module github.com/m0serve/m0serve

go 1.26.0

require (
	github.com/fsnotify/fsnotify v1.9.0
	github.com/gobwas/ws v1.5.0
	github.com/klauspost/compress v1.20.4
	github.com/pawelgaczynski/giouring v0.0.0-20230826085535-69588b89acb9
	golang.org/x/sys v0.50.0
)

require github.com/gobwas/httphead v0.1.0 // indirect
