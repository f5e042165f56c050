// Package pgtrigger describes the statement-level triggers an owner package attaches to its tables (its
// functions in its sql/ folder); db.ApplyFunctions attaches the missing ones.
package pgtrigger

// A Trigger attaches one of an owner's functions to a table, for each statement.
type Trigger struct {
	Name     string // unique on its table; a trigger whose definition changes gets a new name
	Table    string
	Event    string // INSERT, UPDATE or DELETE
	Function string
}

// On is the trigger name on table that calls function for each event statement.
func On(name, table, event, function string) Trigger {
	return Trigger{Name: name, Table: table, Event: event, Function: function}
}

// Definition is the trigger's CREATE OR REPLACE statement: an INSERT trigger sees the statement's new rows
// as new_rows, an UPDATE trigger also its old ones as old_rows, a DELETE trigger only old_rows.
func (t Trigger) Definition() string {
	ref := "REFERENCING NEW TABLE AS new_rows"
	switch t.Event {
	case "UPDATE":
		ref = "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows"
	case "DELETE":
		ref = "REFERENCING OLD TABLE AS old_rows"
	}
	return "CREATE OR REPLACE TRIGGER " + t.Name + " AFTER " + t.Event + " ON " + t.Table + " " + ref +
		" FOR EACH STATEMENT EXECUTE FUNCTION " + t.Function + "()"
}
