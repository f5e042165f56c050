package openapi_test

import (
	"context"
	"testing"

	"github.com/reftrack/reftrack/openapi"
)

func TestLoadValidates(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.OpenAPI; got != "3.0.3" {
		t.Errorf("openapi version = %q, want 3.0.3", got)
	}
}
