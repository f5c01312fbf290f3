module github.com/m0serve/m0serve/bench

go 1.26.0
