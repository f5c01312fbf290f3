module github.com/m0serve/m0serve

go 1.26.0

require (
	github.com/pawelgaczynski/giouring v0.0.0-20230826085535-69588b89acb9 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
