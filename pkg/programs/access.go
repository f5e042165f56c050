package programs

import (
	"context"
	"errors"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apikeys"
)

// ErrNotMember means the account is not a member of the program's workspace.
var ErrNotMember = errors.New("not a member of the program's workspace")

// Access is the program, once the account's role in the program's workspace allows action: else
// ErrNotFound, ErrNotMember or an *accounts.RoleError.
func Access(ctx context.Context, db sqlx.QueryerContext, accountID, programID int64, action string) (Program, error) {
	p, err := Get(ctx, db, programID)
	if err != nil {
		return Program{}, err
	}
	role, err := accounts.Role(ctx, db, accountID, p.WorkspaceID)
	if errors.Is(err, accounts.ErrNotMember) {
		return Program{}, ErrNotMember
	}
	if err != nil {
		return Program{}, err
	}
	if err := accounts.Authorize(role, action); err != nil {
		return Program{}, err
	}
	return p, nil
}

// AccessLink is the link, once the account's role in its program's workspace allows action (Access). A
// link without a program, or whose program is gone, is ErrLinkNotFound.
func AccessLink(ctx context.Context, db sqlx.QueryerContext, accountID, linkID int64, action string) (Link, error) {
	l, err := GetLink(ctx, db, linkID)
	if err == nil && l.ProgramID == nil {
		err = ErrLinkNotFound
	}
	if err != nil {
		return Link{}, err
	}
	if _, err := Access(ctx, db, accountID, *l.ProgramID, action); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Link{}, ErrLinkNotFound // the link's program is gone, so is the link
		}
		return Link{}, err
	}
	return l, nil
}

// Shown is a program as its settings show it: with its API key, masked ("" when it has none).
type Shown struct {
	Program
	KeyMasked string
}

// Show is p as its settings show it.
func Show(ctx context.Context, db sqlx.QueryerContext, p Program) (Shown, error) {
	k, err := apikeys.Current(ctx, db, p.ID)
	switch {
	case err == nil:
		return Shown{Program: p, KeyMasked: k.Masked()}, nil
	case errors.Is(err, apikeys.ErrNoKey):
		return Shown{Program: p}, nil
	}
	return Shown{}, err
}

// Change applies u to the program's settings (Apply) and shows the program as changed.
func Change(ctx context.Context, dbx *sqlx.DB, id int64, u Update) (Shown, error) {
	p, err := Apply(ctx, dbx, id, u)
	if err != nil {
		return Shown{}, err
	}
	return Show(ctx, dbx, p)
}

// AccessOne is the one row read finds for id, once the account's role in its program's workspace allows
// action: notFound when read finds none, else Access's refusals. The owners of a program's rows (leads,
// sales…) answer a member's GET of one row with it, from the batch read their other readers use.
func AccessOne[T any](ctx context.Context, db sqlx.QueryerContext, accountID, id int64, action string, notFound error,
	read func(context.Context, sqlx.QueryerContext, []int64) ([]T, error), programOf func(T) int64) (T, error) {
	var zero T
	list, err := read(ctx, db, []int64{id})
	if err != nil {
		return zero, err
	}
	if len(list) == 0 {
		return zero, notFound
	}
	if _, err := Access(ctx, db, accountID, programOf(list[0]), action); err != nil {
		return zero, err
	}
	return list[0], nil
}
