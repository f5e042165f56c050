package main

import (
	"embed"
	"fmt"
	"strings"
	"text/template"
)

// The integration plans integration_plan answers: docs/integration.md and the tracker's, the Go SDK's and
// the TypeScript SDK's documentation, arranged for each framework (mcp_test.go checks that
// every route, tracker call and SDK name they use is documented). common.tmpl holds the steps every plan
// shares.
//
//go:embed mcpplans/*.tmpl
var planFiles embed.FS

// planFrameworks are the frameworks integration_plan knows, each with its mcpplans/<name>.tmpl.
var planFrameworks = []string{"nextjs", "express", "django", "rails", "go", "generic"}

var planTemplates = template.Must(template.New("").Option("missingkey=error").ParseFS(planFiles, "mcpplans/*.tmpl"))

// planParams fill a plan in.
type planParams struct {
	BaseURL   string // the server's URL
	ProgramID string // the program's id, or PROGRAM_ID
	Domain    string // the program's domain, or an example
	Note      string // why a value is a placeholder, if one is
}

// renderPlan is framework's plan, filled in with p.
func renderPlan(framework string, p planParams) (string, error) {
	known := false
	for _, f := range planFrameworks {
		known = known || f == framework
	}
	if !known {
		return "", toolError(&userError{Message: fmt.Sprintf("no plan for framework %q", framework),
			Next: "pick one of " + strings.Join(planFrameworks, ", ") + " (generic: curl, for any language)."})
	}
	var b strings.Builder
	if err := planTemplates.ExecuteTemplate(&b, framework+".tmpl", p); err != nil {
		return "", err
	}
	return b.String(), nil
}
