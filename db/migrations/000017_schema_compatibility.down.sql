DROP TABLE schema_compatibility;
