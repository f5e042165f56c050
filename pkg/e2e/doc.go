// Package e2e holds tests that drive reftrack from outside the server, as its users do: the Go SDK (its
// own module, required here through a replace of ./sdk) against a real server whose every answer is
// checked against the spec, the SDK's examples, and a brand's module that gets the SDK with `go get`.
package e2e
