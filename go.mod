module github.com/deskhand/deskhand

go 1.26

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/sourcegraph/jsonrpc2 v0.2.3 // indirect
)
