package db_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// Versions are 1, 2, … N with no gap, each with an up and a down file: CheckCurrent counts the recorded
// migrations between a build and the schema by their numbers.
func TestMigrationVersionsAreConsecutive(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, e := range entries {
		files[e.Name()] = true
	}
	latest, err := db.LatestVersion()
	if err != nil {
		t.Fatal(err)
	}
	for v := uint(1); v <= latest; v++ {
		var up, down bool
		prefix := fmt.Sprintf("%06d_", v)
		for name := range files {
			up = up || strings.HasPrefix(name, prefix) && strings.HasSuffix(name, ".up.sql")
			down = down || strings.HasPrefix(name, prefix) && strings.HasSuffix(name, ".down.sql")
		}
		if !up || !down {
			t.Errorf("migration %d: up file %v, down file %v", v, up, down)
		}
	}
	if want := 2 * int(latest); len(files) != want {
		t.Errorf("%d migration files, want %d (an up and a down per version)", len(files), want)
	}
	// The marker is only read on the first line: a marker elsewhere is a mistake.
	if err := fs.WalkDir(os.DirFS("migrations"), ".", func(name string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile("migrations/" + name)
		if err != nil {
			return err
		}
		if i := strings.Index(string(b), db.CompatibleMarker); i > 0 || (i == 0 && strings.HasSuffix(name, ".down.sql")) {
			t.Errorf("%s: the compatibility marker belongs on the first line of an up file", name)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// migrate up records each applied migration's marker.
func TestMigrateUpRecordsCompatibility(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.Empty(t)
	if err := db.MigrateUp(ctx, d.DB.DB); err != nil {
		t.Fatal(err)
	}
	latest, _ := db.LatestVersion()
	var rows []struct {
		Version    int64 `db:"version"`
		Compatible bool  `db:"backward_compatible"`
	}
	if err := d.SelectContext(ctx, &rows, `SELECT version, backward_compatible FROM schema_compatibility ORDER BY version`); err != nil {
		t.Fatal(err)
	}
	// The baseline (version 1) has nothing before it to be compatible with.
	if len(rows) != int(latest) || rows[0].Version != 1 || rows[0].Compatible {
		t.Fatalf("recorded %+v, want versions 1…%d with 1 not compatible", rows, latest)
	}
	for _, r := range rows {
		want, err := db.BackwardCompatible(uint(r.Version))
		if err != nil || r.Compatible != want {
			t.Errorf("version %d recorded compatible=%v, its file says %v (%v)", r.Version, r.Compatible, want, err)
		}
	}
	// Reverting forgets the reverted migrations' rows (reverting them all, the table itself goes with the
	// baseline).
	if err := db.MigrateDown(ctx, d.DB.DB, 0); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d, `SELECT count(*) FROM pg_tables WHERE tablename = 'schema_compatibility'`); n != 0 {
		t.Error("schema_compatibility kept after reverting its migration")
	}
	if err := db.MigrateUp(ctx, d.DB.DB); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d, `SELECT count(*) FROM schema_compatibility`); n != int(latest) {
		t.Errorf("%d rows after up again", n)
	}
}

// A rolling deploy migrates before replacing the old replicas: a build finds the schema newer than itself
// and serves only when every newer migration is backward compatible.
func TestCheckCurrentWithANewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	latest, _ := db.LatestVersion()
	set := func(version uint, compatible ...bool) {
		t.Helper()
		if _, err := d.ExecContext(ctx, `UPDATE schema_migrations SET version = $1`, int64(version)); err != nil {
			t.Fatal(err)
		}
		if _, err := d.ExecContext(ctx, `DELETE FROM schema_compatibility WHERE version > $1`, int64(latest)); err != nil {
			t.Fatal(err)
		}
		for i, c := range compatible {
			if _, err := d.ExecContext(ctx, `INSERT INTO schema_compatibility (version, backward_compatible) VALUES ($1, $2)`,
				int64(latest)+int64(i)+1, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() { set(latest) }) // the database goes back to the pool as it came

	cases := []struct {
		name       string
		version    uint
		compatible []bool
		want       string // "" accepts
	}{
		{"current", latest, nil, ""},
		{"one newer, compatible", latest + 1, []bool{true}, ""},
		{"two newer, compatible", latest + 2, []bool{true, true}, ""},
		{"two newer, the second not compatible", latest + 2, []bool{true, false},
			fmt.Sprintf("database at version %d, this build wants %d, and migration %d is not backward compatible", latest+2, latest, latest+2)},
		{"newer, applied by another tool (not recorded)", latest + 2, []bool{true},
			fmt.Sprintf("database at version %d, this build wants %d, and not every newer migration is known to be backward compatible", latest+2, latest)},
		{"behind", latest - 1, nil, "run `reftrackd migrate up`"},
	}
	for _, c := range cases {
		set(c.version, c.compatible...)
		err := db.CheckCurrent(ctx, d.DB.DB)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (!errors.Is(err, db.ErrSchemaNotCurrent) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func count(t *testing.T, d *dbtest.Database, q string) int {
	t.Helper()
	var n int
	if err := d.GetContext(context.Background(), &n, q); err != nil {
		t.Fatal(err)
	}
	return n
}

// A direct connection keeps its session (the transaction pooler's refusal is checked through PgBouncer by
// the cluster test).
func TestRequireSessionOnADirectConnection(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	if err := db.RequireSession(context.Background(), d.DB.DB); err != nil {
		t.Fatal(err)
	}
}

// A database made by the migrations the baseline replaced (before the first release) is neither current
// nor migrated: serve and the readiness probe refuse it, and migrate up changes nothing, both saying to
// recreate it. Such a database is at one of their versions with no record of the baseline: before their
// version 17 without the compatibility table at all, from it on without its row 1.
func TestPreBaselineDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		version int
		change  string
	}{
		{"at version 25", 25, `DELETE FROM schema_compatibility WHERE version = 1;
			INSERT INTO schema_compatibility (version, backward_compatible) SELECT v, true FROM generate_series(17, 25) v`},
		{"at version 12", 12, `DROP TABLE schema_compatibility`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := dbtest.New(t)
			if _, err := d.ExecContext(ctx, c.change+fmt.Sprintf(`; UPDATE schema_migrations SET version = %d`, c.version)); err != nil {
				t.Fatal(err)
			}
			if pre, err := db.PreBaseline(ctx, d.DB.DB); err != nil || !pre {
				t.Errorf("PreBaseline = %v, %v; want true", pre, err)
			}
			want := fmt.Sprintf("the database was made by a build from before the schema baseline (version %d of the migrations the baseline replaced)", c.version)
			err := db.CheckCurrent(ctx, d.DB.DB)
			if !errors.Is(err, db.ErrSchemaNotCurrent) || !errors.Is(err, db.ErrPreBaseline) || !strings.Contains(err.Error(), want) {
				t.Errorf("CheckCurrent = %v, want ErrPreBaseline saying %q", err, want)
			}
			err = db.MigrateUp(ctx, d.DB.DB)
			if !errors.Is(err, db.ErrPreBaseline) || !strings.Contains(err.Error(), "drop the database and create it again") {
				t.Errorf("MigrateUp = %v, want ErrPreBaseline saying to recreate the database", err)
			}
			if v, dirty, err := db.Version(ctx, d.DB.DB); err != nil || dirty || v != uint(c.version) {
				t.Errorf("after migrate up: version %d, dirty %v, %v; want %d untouched", v, dirty, err, c.version)
			}
		})
	}
}
