DROP INDEX IF EXISTS customers_program_list_idx;
