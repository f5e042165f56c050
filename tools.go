//go:build tools

// Package tools pins the versions of the code generators run by `make generate` (go.mod records them;
// go:generate runs them with `go run`).
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
)
