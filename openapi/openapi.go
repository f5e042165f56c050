// Package openapi embeds the published OpenAPI document, the contract that the server, the SDK client
// and the tests are all built from.
package openapi

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// YAML is openapi.yaml exactly as published at GET /openapi.yaml.
//
//go:embed openapi.yaml
var YAML []byte

// Load parses and validates the document. Each call returns a fresh copy that the caller may modify.
func Load(ctx context.Context) (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(YAML)
	if err != nil {
		return nil, fmt.Errorf("parse openapi.yaml: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("validate openapi.yaml: %w", err)
	}
	return doc, nil
}

// JSON renders the document as JSON, for GET /openapi.json.
func JSON(doc *openapi3.T) ([]byte, error) {
	return json.Marshal(doc)
}

// Spec is the embedded document, parsed once per process and shared: callers only read it (Load gives a
// copy to change).
var Spec = sync.OnceValues(func() (*openapi3.T, error) { return Load(context.Background()) })

// Document is the embedded document as a JSON value, as GET /openapi.json answers it, rendered once per
// process from Spec: the file is a constant of the build.
var Document = sync.OnceValues(func() (map[string]any, error) {
	doc, err := Spec()
	if err != nil {
		return nil, err
	}
	raw, err := JSON(doc)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
})
