package gateway

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/core/state"
)

// Pack is one domain: its contracts, trusted sources, context providers,
// Cedar policy and executor. Every contract's action must start with the
// pack's name and a dot.
type Pack struct {
	// Name is the pack's name and the prefix of its actions ("banking").
	Name string
	// Contracts are the actions the pack offers.
	Contracts []*contract.Contract
	// Policies holds the pack's Cedar policy files and schema at its root
	// (see core/policy.Load).
	Policies fs.FS
	// Registries are the pack's trusted sources by name.
	Registries map[string]resolve.Registry
	// Context are the pack's context providers, asked in order. The
	// attributes of registry records become facts named <param>_<attr>;
	// values resolved from a mandate claim bring none, so facts the policy
	// needs for them must come from a provider.
	Context []ContextProvider
	// Executor carries out allowed operations.
	Executor Executor
}

// FactQuery is what a context provider is asked about.
type FactQuery struct {
	Owner  intent.Owner
	Action intent.Action
	// Args are the resolved arguments (trusted values for critical ones).
	Args intent.Args
	// Resolved are the critical arguments with their provenance.
	Resolved []intent.Resolved
	// Budget is the mandate's main budget. An amount is reserved in minor
	// units of its Currency unless the contract names a BudgetCurrency
	// fact; then against the budget in that currency (Budgets).
	Budget intent.Money
	// Budgets are all the mandate's budgets, one per currency, Budget
	// first, so that a pack whose records carry a currency can tell
	// whether the user authorised spending in it. Read-only.
	Budgets []intent.Money
	// Claims are the mandate's claims (claim name → the values the user
	// gave), so that a provider can compare free text with what the user
	// asked for (the links of the user's request). Read-only: a provider
	// must not change them.
	Claims map[string][]string
	// Now is the time of the decision, in UTC: the calendar windows of the
	// contract's totals (contract.Total) are those of this instant, so a
	// provider giving a total's Outside fact reads the same window.
	Now time.Time
}

// ContextProvider reads facts from a system of record: a bill's residual,
// a bank account's age, payments already made. Facts returns facts by name;
// a name already given by an earlier provider is an error. Any error fails
// the decision closed (CodeContextFailed). The agent is told to try again
// later, unless the error wraps a *VisibleError: a failure that trying
// again will not mend (a vendor with more records than one decision
// reads), whose message then tells the agent why and what to do instead.
// Called concurrently.
type ContextProvider interface {
	Facts(ctx context.Context, q FactQuery) (map[string]intent.Value, error)
}

// ContextFunc adapts a function to ContextProvider.
type ContextFunc func(ctx context.Context, q FactQuery) (map[string]intent.Value, error)

// Facts calls f.
func (f ContextFunc) Facts(ctx context.Context, q FactQuery) (map[string]intent.Value, error) {
	return f(ctx, q)
}

// Result is what an executor reports of an operation it carried out.
type Result struct {
	// Output is shown to the agent: a short, factual text or JSON (the
	// transaction id, the record read). It must never hold secrets or
	// another owner's data.
	Output string
	// Summary is what the receipt keeps of the execution: a short,
	// non-sensitive text such as a transaction id. Empty means the receipt
	// keeps only the SHA-256 of Output and its length, so that record
	// contents (a patient's notes) never enter the append-only chain.
	Summary string
}

// VisibleError is an executor's or a context provider's error whose
// message may be shown to the agent as it is. Any other error of theirs
// is reported to the agent in generic words, so that internal detail
// (hosts, SQL, another owner's data) never leaks through a refusal. From
// a context provider it means that trying again will not help (see
// ContextProvider).
type VisibleError struct {
	// Msg is written for the agent: what was refused and why; from a
	// context provider, one or more sentences that also say what to do
	// instead.
	Msg string
	// Err is the underlying error, for logs and errors.Is; never shown.
	Err error
}

// Visible returns a *VisibleError with the message msg wrapping err.
func Visible(msg string, err error) error { return &VisibleError{Msg: msg, Err: err} }

func (e *VisibleError) Error() string { return e.Msg }

// Unwrap returns the underlying error.
func (e *VisibleError) Unwrap() error { return e.Err }

// ErrNotExecuted is wrapped by an executor's error when it is certain that
// nothing happened (validation refused before any write). The gateway then
// releases the budget reservation; for any other error it keeps the amount
// as spent, since money may have moved.
var ErrNotExecuted = errors.New("gateway: operation not executed")

// Executor carries out an allowed operation with resolved values only,
// under an identity the agent never holds. The operation hash is the
// idempotency key: an executor that talks to a remote system should record
// it there, so that a lost answer can be checked instead of retried.
// Called concurrently.
type Executor interface {
	Execute(ctx context.Context, op intent.Operation, hash intent.OperationHash) (Result, error)
}

// ExecutorFunc adapts a function to Executor.
type ExecutorFunc func(ctx context.Context, op intent.Operation, hash intent.OperationHash) (Result, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, op intent.Operation, hash intent.OperationHash) (Result, error) {
	return f(ctx, op, hash)
}

// Store is the gateway's state: budget ledger, single-use keys, record
// locks and receipt chains. It is defined in core/state, which stores
// implement without importing the pipeline.
type Store = state.Store
