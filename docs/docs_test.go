// Package docs is the repository's documentation (Markdown, and the images it shows). Its tests keep the
// documentation true where a program can tell: the README's size, every relative link, no rule cited from
// outside the repository, and `make fuzz` running every fuzz target, as docs/testing.md says.
package docs

// root is the repository's root, from this package's directory (where go test runs its tests).
const root = ".."
