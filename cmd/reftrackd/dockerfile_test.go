package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/modfile"
)

// The repository's Dockerfile builds with the Go version go.mod names, and its final stage runs as a
// user that is not root (docs/deploy.md).
func TestDockerfile(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Go == nil {
		t.Fatal("go.mod has no go directive")
	}
	want := f.Go.Version
	if f.Toolchain != nil { // a toolchain line, when present, is the Go that builds
		want = strings.TrimPrefix(f.Toolchain.Name, "go")
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkDockerfile(string(dockerfile), want) {
		t.Error("Dockerfile: " + p)
	}
}

func TestCheckDockerfile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		dockerfile string
		want       []string
	}{
		{"distroless, numeric user", `# syntax=docker/dockerfile:1
FROM --platform=$BUILDPLATFORM golang:1.26.8-bookworm AS build
RUN go build \
    -o /out/ ./cmd/reftrackd
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/reftrackd /
USER 65532:65532
ENTRYPOINT ["/reftrackd"]`, nil},
		{"named user, registry-qualified golang", `from docker.io/library/golang:1.26.8 as build
FROM debian:bookworm-slim
USER app`, nil},
		{"go version drifted", `FROM golang:1.26.7-bookworm AS build
FROM scratch
USER 65532`, []string{`stage "build": golang:1.26.7-bookworm is Go 1.26.7, go.mod says 1.26.8`}},
		{"root in the final stage", `FROM golang:1.26.8-bookworm AS build
USER nobody
FROM scratch
USER root`, []string{`the final stage runs as "root"; want a user that is not root`}},
		{"uid 0 with a group", `FROM golang:1.26.8-bookworm
FROM scratch
USER 0:65532`, []string{`the final stage runs as "0:65532"; want a user that is not root`}},
		{"no USER in the final stage", `FROM golang:1.26.8-bookworm AS build
USER 65532
FROM gcr.io/distroless/static-debian12:nonroot`, []string{"the final stage has no USER instruction; want one that is not root"}},
		{"version from a build argument", `ARG GO=1.26.8
FROM golang:${GO}-bookworm
FROM scratch
USER 1000`, []string{`stage 1: golang:${GO}-bookworm: write the Go version literally, so that it can be compared with go.mod`}},
		{"untagged golang", `FROM golang AS build
FROM scratch
USER 1000`, []string{`stage "build": golang has no version tag; want golang:1.26.8-…`}},
		{"no golang stage", `FROM scratch
USER 1000`, []string{"no stage builds FROM golang"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkDockerfile(tt.dockerfile, "1.26.8")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// dockerStage is one FROM of a Dockerfile and the USER instructions that follow it.
type dockerStage struct {
	image, name string
	users       []string
}

// checkDockerfile returns what is wrong with dockerfile: a golang stage whose version is not goVersion,
// no golang stage, or a final stage that does not name a user other than root.
func checkDockerfile(dockerfile, goVersion string) []string {
	stages := dockerStages(dockerfile)
	if len(stages) == 0 {
		return []string{"no FROM instruction"}
	}
	var problems []string
	golang := 0
	for i, s := range stages {
		ref := s.image
		if at := strings.Index(ref, "@"); at >= 0 { // a digest pin
			ref = ref[:at]
		}
		repo, tag := ref, ""
		if colon := strings.LastIndex(ref, ":"); colon > strings.LastIndex(ref, "/") {
			repo, tag = ref[:colon], ref[colon+1:]
		}
		if repo != "golang" && !strings.HasSuffix(repo, "/golang") {
			continue
		}
		golang++
		label := strconv.Itoa(i + 1) // stages counted from 1, or named
		if s.name != "" {
			label = `"` + s.name + `"`
		}
		switch version, _, _ := strings.Cut(tag, "-"); {
		case strings.Contains(s.image, "$"):
			problems = append(problems, "stage "+label+": "+s.image+": write the Go version literally, so that it can be compared with go.mod")
		case tag == "":
			problems = append(problems, "stage "+label+": "+s.image+" has no version tag; want golang:"+goVersion+"-…")
		case version != goVersion:
			problems = append(problems, "stage "+label+": "+s.image+" is Go "+version+", go.mod says "+goVersion)
		}
	}
	if golang == 0 {
		problems = append(problems, "no stage builds FROM golang")
	}
	final := stages[len(stages)-1]
	if len(final.users) == 0 {
		return append(problems, "the final stage has no USER instruction; want one that is not root")
	}
	user := final.users[len(final.users)-1]
	if name, _, _ := strings.Cut(user, ":"); name == "root" || strings.Trim(name, "0") == "" {
		problems = append(problems, `the final stage runs as "`+user+`"; want a user that is not root`)
	}
	return problems
}

// dockerStages reads the stages of a Dockerfile: comments and parser directives dropped, lines continued
// by a trailing backslash joined, instruction names in any case.
func dockerStages(dockerfile string) []dockerStage {
	var (
		stages []dockerStage
		line   string
	)
	instruction := func(text string) {
		fields := strings.Fields(text)
		if len(fields) == 0 {
			return
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			var args []string
			for _, f := range fields[1:] {
				if !strings.HasPrefix(f, "--") { // --platform=…
					args = append(args, f)
				}
			}
			s := dockerStage{}
			if len(args) > 0 {
				s.image = args[0]
			}
			if len(args) == 3 && strings.EqualFold(args[1], "AS") {
				s.name = args[2]
			}
			stages = append(stages, s)
		case "USER":
			if len(stages) > 0 && len(fields) > 1 {
				stages[len(stages)-1].users = append(stages[len(stages)-1].users, fields[1])
			}
		}
	}
	for _, raw := range strings.Split(dockerfile, "\n") {
		trimmed := strings.TrimSpace(raw)
		if strings.HasPrefix(trimmed, "#") {
			continue // a comment, also inside a continued instruction
		}
		if strings.HasSuffix(trimmed, `\`) {
			line += strings.TrimSuffix(trimmed, `\`) + " "
			continue
		}
		instruction(line + trimmed)
		line = ""
	}
	instruction(line)
	return stages
}
