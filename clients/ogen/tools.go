//go:build tools

// Package main's tools: ogen, pinned by this module's go.mod, run by clients_test.go as
// `go run github.com/ogen-go/ogen/cmd/ogen`.
package main

import _ "github.com/ogen-go/ogen/cmd/ogen"
