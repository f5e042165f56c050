// Package sdkclient generates the Go SDK's client into the SDK module (sdk/client) from
// openapi/openapi.yaml, with the generator pinned by this module's tools.go: the SDK module cannot run
// the generator without carrying its dependencies. Run `make generate`.
package sdkclient

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../openapi/openapi.yaml
