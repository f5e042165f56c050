package localcluster

import (
	"os"
	"strings"
	"testing"
)

// docs/deploy.md shows the balancer's and the pooler's settings exactly as the cluster runs them.
func TestDeployDocShowsTheClusterSettings(t *testing.T) {
	b, err := os.ReadFile("../../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for name, cfg := range map[string]string{
		"pgbouncer.ini": PgBouncerConfig("/etc/pgbouncer", 5432, 6432),
		"haproxy.cfg":   HAProxyConfig(80, docReplicas()),
	} {
		if !strings.Contains(doc, cfg) {
			t.Errorf("docs/deploy.md does not show the cluster's %s; it is:\n%s", name, cfg)
		}
	}
}
