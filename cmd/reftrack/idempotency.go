package main

import (
	"crypto/rand"
	"errors"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/sdk"
)

// idempotencyHelp is what every command that sends a POST of the ledger says about its Idempotency-Key.
const idempotencyHelp = `
Every request it sends carries an Idempotency-Key: a new random one for each run, or the one given with
--idempotency-key. Run it again with the same key (within 24 hours) to retry safely: the server answers
the first answer again and changes nothing.`

// idempotencyKey is one run's Idempotency-Key: --idempotency-key, else a random key.
type idempotencyKey struct {
	flag  string
	value string
}

// register adds --idempotency-key to cmd and says in its help that its requests carry a key.
func (k *idempotencyKey) register(cmd *cobra.Command) {
	cmd.Long = cmd.Short + ".\n" + idempotencyHelp
	cmd.Flags().StringVar(&k.flag, "idempotency-key", "", "the requests' Idempotency-Key, 1 to 255 characters, to retry a run safely (default a random key per run)")
}

// resolve checks --idempotency-key as the server would (and as an HTTP header must be), or draws a
// random key when it was not given.
func (k *idempotencyKey) resolve(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("idempotency-key") {
		k.value = "reftrack-cli-" + rand.Text()
		return nil
	}
	if err := idempotency.CheckKey(k.flag); err != nil {
		return refused(err.Error())
	}
	if strings.ContainsFunc(k.flag, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		return &userError{Message: "Idempotency-Key must not contain control characters", Next: "pass a key of letters, digits and punctuation."}
	}
	k.value = k.flag
	return nil
}

// header is the key to send.
func (k *idempotencyKey) header() *string { return &k.value }

// explain gives an error of a request sent with the key its next step: after no answer or a failure on
// the server's side the request may have been done, and the same key retries it safely; a key used for
// another request must change.
func (k *idempotencyKey) explain(err error) error {
	var u *userError
	if !errors.As(err, &u) {
		return err
	}
	var apiErr *sdk.APIError
	isAnswer := errors.As(u.cause, &apiErr)
	switch {
	case isAnswer && apiErr.Status == http.StatusConflict && apiErr.Message == idempotency.ErrKeyReused.Error():
		u.Next = "that Idempotency-Key was used for another request in the last 24 hours: pass another --idempotency-key, or none for a random one."
	case !isAnswer || apiErr.Status >= 500:
		retry := "The request may have been done: retry it with --idempotency-key " + k.value +
			", and the server answers the first answer instead of doing it twice."
		u.Next = strings.TrimSpace(u.Next + " " + retry)
	}
	return err
}
