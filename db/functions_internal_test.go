package db

import (
	"strings"
	"testing"
)

// A function file holds one CREATE OR REPLACE FUNCTION of its own name and nothing else.
func TestFunctionFileCheck(t *testing.T) {
	t.Parallel()
	const body = "CREATE OR REPLACE FUNCTION f(p_a bigint) RETURNS bigint LANGUAGE sql AS $$ SELECT p_a $$;\n"
	for _, tc := range []struct {
		name, sql, wantErr string
	}{
		{"one function", "-- f doubles nothing.\n" + body, ""},
		{"a tagged body", "CREATE OR REPLACE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $body$ BEGIN END $body$;", ""},
		{"another name", strings.Replace(body, "FUNCTION f(", "FUNCTION g(", 1), "defines function g"},
		{"create without replace", strings.Replace(body, "CREATE OR REPLACE", "CREATE", 1), "not one CREATE OR REPLACE"},
		{"a second statement", body + "DROP TABLE x;\n", "something follows"},
		{"a table first", "CREATE TABLE x (id int);\n" + body, "not one CREATE OR REPLACE"},
		{"unclosed", "CREATE OR REPLACE FUNCTION f() RETURNS void LANGUAGE sql AS $$ SELECT 1", "not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Function{Owner: "pkg/x", Name: "f", SQL: tc.sql}.check()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("check = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("check = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
