package postgres

import "github.com/intentplane/intentplane/core/state"

// PageQuery returns the SQL and arguments Page runs for q, for tests that
// read its plan.
func PageQuery(q state.ReceiptQuery) (string, []any, error) {
	p, err := state.PlanOf(q)
	if err != nil {
		return "", nil, err
	}
	sql, args := pageQuery(p)
	return sql, args, nil
}
