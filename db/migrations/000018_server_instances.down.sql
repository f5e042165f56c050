DROP TABLE server_instances;
