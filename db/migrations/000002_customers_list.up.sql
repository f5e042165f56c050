-- reftrack: backward-compatible
-- The customers list (pkg/customers) reads a program's customers newest first, a page at a time.
CREATE INDEX customers_program_list_idx ON customers (program_id, created_at DESC, id DESC);
