DROP TABLE IF EXISTS synthetic_chains;
