module github.com/highwater-sim/highwater

go 1.26
