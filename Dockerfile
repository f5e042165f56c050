# syntax=docker/dockerfile:1
# The production image of reftrack (docs/deploy.md): reftrackd (the server and its operator commands) and
# reftrack (the CLI), static binaries on distroless, run as a non-root user. Needs BuildKit (the default
# builder since Docker 23; `docker buildx build` elsewhere).
#
#   docker build -t reftrack:dev .
#   docker run --rm -p 8080:8080 -e DATABASE_URL=... -e BASE_URL=... -e OIDC_ISSUER=... reftrack:dev

# Build stage. Its Go version is go.mod's `go` line: cmd/reftrackd/dockerfile_test.go fails when they
# differ, and GOTOOLCHAIN=local makes the build fail rather than download another toolchain. It runs on
# the builder's platform and cross-compiles for the target's (docker buildx build --platform ...).
FROM --platform=$BUILDPLATFORM golang:1.26.8-bookworm AS build
ARG TARGETOS
ARG TARGETARCH
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
WORKDIR /src

# Modules first, so that a change of code does not download them again. The SDK (sdk/) is a module of
# its own that go.mod replaces with ./sdk: its go.mod and go.sum are part of the module graph.
COPY go.mod go.sum ./
COPY sdk/go.mod sdk/go.sum ./sdk/
RUN --mount=type=cache,target=/go/pkg/mod go mod download

# Everything the server serves is embedded by go:embed (migrations, the OpenAPI document, the tracker
# script, the dashboard's page and assets, Redoc), so the binaries are all the final stage needs.
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/reftrackd ./cmd/reftrack

# Final stage: no shell, no package manager; CA certificates (OIDC issuer, TLS to PostgreSQL and Redis),
# time zone data and /etc/passwd with the nonroot user (65532) come with the base image.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/reftrackd /out/reftrack /
# Production mode unless told otherwise: the development login issuer (any email signs in) and the
# profiler are refused, and the server will not start without OIDC_ISSUER.
ENV REFTRACK_ENV=production
# distroless's nonroot user, by number: Kubernetes' runAsNonRoot can only verify a numeric user.
USER 65532:65532
EXPOSE 8080
# No HEALTHCHECK: there is no shell or HTTP client in the image. Load balancers probe /livez and
# orchestrators /readyz (docs/deploy.md, Probes).
ENTRYPOINT ["/reftrackd"]
CMD ["serve"]
