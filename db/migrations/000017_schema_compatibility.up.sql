-- reftrack: backward-compatible
-- Rolling deploys: which migrations the build before them can run against. `reftrackd migrate up`
-- records a row for each migration it applies, backward_compatible when the migration's first line is
-- the marker above (an expand step: new tables, nullable or defaulted columns, new functions; nothing
-- the previous build reads or writes is changed or removed). A build finding the schema newer than
-- itself serves only when every newer migration is recorded here as backward compatible (db.CheckCurrent).
CREATE TABLE schema_compatibility (
    version bigint PRIMARY KEY,
    backward_compatible boolean NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
