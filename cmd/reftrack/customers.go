package main

import (
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/pkg/customers"
)

// customersCmd is `reftrack customers`: the program's customers, newest first, a page at a time or all of
// them, with the partner each came through, how far they went and their money per currency.
func (a *app) customersCmd() *cobra.Command {
	var program, status string
	var partner int64
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "customers",
		Short: "List the program's customers: their partner, how far they went, their revenue and commission",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			params := &client.ListCustomersParams{}
			flags := cmd.Flags()
			if flags.Changed("status") {
				if err := customers.CheckStatus(status); err != nil {
					return refused(err.Error())
				}
				params.Status = ptr(client.CustomerStatus(status))
			}
			if flags.Changed("partner") {
				var err error
				if params.PartnerId, err = partnerFilter(partner); err != nil {
					return err
				}
			}
			if flags.Changed("limit") {
				if err := customers.CheckPageSize(limit); err != nil {
					return refused(err.Error())
				}
				params.Limit = &limit
			}
			_, to, id, err := a.accountProgram(program)
			if err != nil {
				return err
			}
			return listPages(a, all, "customers", func(cursor *string) ([]client.Customer, client.ListMeta, error) {
				params.Cursor = cursor
				page, err := call[client.CustomerListEnvelope](a, to, func(api *client.Client) (*http.Response, error) {
					return api.ListCustomers(cmd.Context(), id, params)
				})
				if err != nil {
					return nil, client.ListMeta{}, err
				}
				return page.Data, page.Meta, nil
			}, a.customerTable)
		},
	}
	f := cmd.Flags()
	f.StringVar(&program, "program", "", "program id (default the current program)")
	f.StringVar(&status, "status", "", "only customers this far: "+strings.Join(customers.Statuses, ", "))
	f.Int64Var(&partner, "partner", 0, "only the customers this partner brought (the partner's id)")
	f.IntVar(&limit, "limit", 0, fmt.Sprintf("customers per page, 1 to %d (default %d)", customers.MaxPageSize, customers.DefaultPageSize))
	f.BoolVar(&all, "all", false, "list every page, following the server's cursor")
	return cmd
}

// customerTable prints customers; money in major units, one currency after another.
func (a *app) customerTable(cs []client.Customer) {
	w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tCUSTOMER\tPARTNER\tSTATUS\tFIRST SALE\tREVENUE\tCOMMISSION")
	for _, c := range cs {
		status := string(c.Status)
		if c.IsTest {
			status += " (test)"
		}
		var revenue, commission []string
		for _, m := range c.Money {
			revenue = append(revenue, money(m.RevenueCents, string(m.Currency)))
			commission = append(commission, money(m.CommissionCents, string(m.Currency)))
		}
		if len(c.Money) == 0 {
			revenue, commission = []string{"-"}, []string{"-"}
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Id, orDash(c.CustomerKey), orDash(c.PartnerName), status, day(c.FirstSaleAt),
			strings.Join(revenue, ", "), strings.Join(commission, ", "))
	}
	w.Flush()
}
