// Command reftrack is the command-line client of reftrack: log in through the browser, create a
// program, check its status, fire synthetic events, manage its API key, invite and decide on its
// partners and their referral links, approve or reject its commissions and pay its partners (balances,
// payouts and their export).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	a := newApp(os.Stdin, os.Stdout, os.Stderr)
	if err := a.root().ExecuteContext(ctx); err != nil {
		var ue *userError
		if errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, ue.Render())
		} else {
			fmt.Fprintln(os.Stderr, "Error:", err)
		}
		os.Exit(1)
	}
}
