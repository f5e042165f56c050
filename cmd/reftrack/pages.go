package main

import (
	"fmt"

	"github.com/reftrack/reftrack/gen/client"
)

// listPage is a list route's answer: the envelope every paged list of the API shares.
type listPage[T any] struct {
	Data []T             `json:"data"`
	Meta client.ListMeta `json:"meta"`
}

// listPages fetches a paged list (its first page, and with all each next one, following the server's
// cursor; fetch gets nil for the first) and prints it: with --json one envelope of every item fetched and
// the last page's meta, else table, or "No <noun>." for none, and a hint when pages were left.
func listPages[T any](a *app, all bool, noun string, fetch func(cursor *string) ([]T, client.ListMeta, error),
	table func([]T)) error {
	list := listPage[T]{Data: []T{}}
	var cursor *string
	for {
		data, meta, err := fetch(cursor)
		if err != nil {
			return err
		}
		list.Data, list.Meta = append(list.Data, data...), meta
		if !all || meta.NextCursor == nil {
			break
		}
		cursor = meta.NextCursor
	}
	if a.jsonOut {
		return a.printJSON(list)
	}
	if len(list.Data) == 0 {
		fmt.Fprintf(a.out, "No %s.\n", noun)
		return nil
	}
	table(list.Data)
	if list.Meta.NextCursor != nil {
		fmt.Fprintf(a.out, "More %s: run it with --all to list every page.\n", noun)
	}
	return nil
}

// partnerFilter is a list's --partner flag as the routes take it: a partner's id, a positive integer.
func partnerFilter(partner int64) (*int64, error) {
	if partner < 1 {
		return nil, &userError{Message: fmt.Sprintf("a partner is named by its id, a positive integer, not %d", partner),
			Next: "`reftrack partners` lists the program's partners with their ids."}
	}
	return &partner, nil
}
