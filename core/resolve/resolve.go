package resolve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
)

// Record is a trusted record returned by a registry.
type Record struct {
	// ID identifies the record in its registry (a beneficiary id, a
	// res.partner.bank id, an encounter id).
	ID string
	// Value is the record's canonical value for the parameter, which
	// replaces whatever the agent spelled.
	Value string
	// Version is the record's version in its source; empty if it has none.
	Version string
	// At is when the value was last set, in UTC; zero if unknown.
	At time.Time
	// Attrs are facts about the record (trusted, active, age_days...)
	// that policies may read; nil if none.
	Attrs map[string]intent.Value
}

// Registry is a trusted source of records, scoped to an owner. Lookup
// returns the owner's record matching value (already normalized), or an
// error wrapping ErrNoMatch when the owner has none; any other error means
// the source could not be read and the decision fails closed. A registry
// must never return another owner's record. Lookup is called concurrently.
type Registry interface {
	Lookup(ctx context.Context, owner intent.Owner, value string) (Record, error)
}

// ScopedRegistry is a Registry whose records depend on the critical
// values resolved before its parameter (in contract order): a vendor's
// bill is looked for among the bills of the vendor already resolved, so
// that a reference two vendors share names the named vendor's bill.
// Resolve calls LookupIn instead of Lookup, with resolved holding, by
// parameter name, the trusted value of each critical argument resolved
// so far (never the agent's spelling of one not yet resolved). Its
// contract is Lookup's: the owner's record matching value, or an error
// wrapping ErrNoMatch.
type ScopedRegistry interface {
	Registry
	LookupIn(ctx context.Context, owner intent.Owner, value string, resolved map[string]string) (Record, error)
}

// RegistryFunc adapts a function to Registry.
type RegistryFunc func(ctx context.Context, owner intent.Owner, value string) (Record, error)

// Lookup calls f.
func (f RegistryFunc) Lookup(ctx context.Context, owner intent.Owner, value string) (Record, error) {
	return f(ctx, owner, value)
}

// Errors of resolution, wrapped in *Error.
var (
	// ErrNoMatch: no trusted source of the owner has the value.
	ErrNoMatch = errors.New("resolve: no trusted record matches")
	// ErrNotNormalizable: the value is refused by the parameter's normalizer.
	ErrNotNormalizable = errors.New("resolve: value refused by its normalizer")
	// ErrUnavailable: a registry could not be read, or is not configured.
	ErrUnavailable = errors.New("resolve: trusted source unavailable")
)

// Error says which critical parameter could not be resolved.
type Error struct {
	Param  string
	Sent   string
	Detail string // what a person or the agent can act on
	Err    error  // ErrNoMatch, ErrNotNormalizable or ErrUnavailable
}

func (e *Error) Error() string {
	return fmt.Sprintf("argument %q: %s", e.Param, e.Detail)
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Input is what resolution works on.
type Input struct {
	Owner     intent.Owner
	MandateID string
	// Claims are the mandate's claims (claim name → values the user gave).
	Claims map[string][]string
	// Strict mode (the mandate's "strict") accepts only mandate claims:
	// registry sources are not consulted.
	Strict bool
	// Args are the decoded arguments; critical ones hold the agent's
	// spelling.
	Args intent.Args
}

// Output is the result of resolution.
type Output struct {
	// Args are the arguments with each critical value replaced by the
	// trusted one: a copy of Input.Args if any value changed, else
	// Input.Args itself. Resolve never writes to Input.Args, and neither
	// may its callers write to either.
	Args intent.Args
	// Resolved lists each critical argument present, in contract order.
	Resolved []intent.Resolved
	// Attrs holds, for each entry of Resolved at the same index, the
	// attributes of the registry record it resolved to. A value resolved
	// from a mandate claim has none (nil): a pack whose policy needs facts
	// about such a value must read them with a context provider.
	Attrs []map[string]intent.Value
}

// Resolver resolves critical values. Registries maps a registry name
// (contract.FromRegistry) to its implementation; a contract naming a
// registry that is missing here fails with ErrUnavailable.
type Resolver struct {
	Registries map[string]Registry
}

// Resolve resolves every critical argument present in in.Args against c's
// sources, in order: the first source with a match wins. The returned error
// is an *Error for a refusal, or the context's error.
func (r Resolver) Resolve(ctx context.Context, c *contract.Contract, in Input) (Output, error) {
	out := Output{Args: in.Args} // copied on the first value resolution changes: in.Args stays what was sent
	copied := false
	for i := range c.Params { // c.Critical() without building the list
		p := &c.Params[i]
		v, ok := in.Args[p.Name]
		if !p.Critical || !ok {
			continue
		}
		sent := v.Str
		norm := sent
		if p.Normalizer != nil {
			n, err := p.Normalizer(sent)
			if err != nil {
				return Output{}, &Error{Param: p.Name, Sent: sent, Detail: err.Error(), Err: ErrNotNormalizable}
			}
			norm = n
		}
		res, attrs, err := r.resolveOne(ctx, p, in, norm, out.Resolved)
		if err != nil {
			var re *Error
			if errors.As(err, &re) {
				re.Sent = sent
			}
			return Output{}, err
		}
		res.Sent = sent
		if res.Value != v.Str || v.Kind != intent.KindString {
			if !copied {
				out.Args, copied = in.Args.Clone(), true
			}
			out.Args[p.Name] = intent.Str(res.Value)
		}
		out.Resolved = append(out.Resolved, res)
		out.Attrs = append(out.Attrs, attrs)
	}
	return out, nil
}

// resolveOne resolves parameter p, whose normalized value is norm, from
// its sources in order: the first mandate claim or registry record that
// matches wins. before are the parameters resolved already (a scoped
// registry looks up within them). An error wraps ErrNoMatch (with the
// registry's detail, when it gave one) or ErrUnavailable.
func (r Resolver) resolveOne(ctx context.Context, p *contract.Parameter, in Input, norm string, before []intent.Resolved) (intent.Resolved, map[string]intent.Value, error) {
	tried := 0
	detail := "is neither a value the user authorised nor a record on file"
	for _, s := range p.Sources {
		switch s.Kind {
		case contract.SourceMandate:
			tried++
			if c, ok := claimMatching(p, in.Claims[s.Name], norm); ok {
				return intent.Resolved{
					Param: p.Name, Value: c,
					Provenance: intent.Provenance{Source: s.String(), RecordID: in.MandateID},
				}, nil, nil
			}
		case contract.SourceRegistry:
			if in.Strict {
				continue
			}
			tried++
			res, attrs, err := r.fromRegistry(ctx, p, s, in.Owner, norm, before)
			var nm *noMatchError
			switch {
			case errors.As(err, &nm):
				detail = nm.detail
				continue
			case errors.Is(err, ErrNoMatch):
				continue
			}
			return res, attrs, err
		}
	}
	if tried == 0 {
		detail = "no trusted source may be used in this mandate's mode"
	}
	return intent.Resolved{}, nil, &Error{Param: p.Name, Detail: detail, Err: ErrNoMatch}
}

// claimMatching returns the mandate claim value among claims that, once
// normalized as p's values are, equals norm. A claim value the normalizer
// refuses never matches.
func claimMatching(p *contract.Parameter, claims []string, norm string) (string, bool) {
	for _, cv := range claims {
		c := cv
		if p.Normalizer != nil {
			n, err := p.Normalizer(cv)
			if err != nil {
				continue
			}
			c = n
		}
		if c == norm {
			return c, true
		}
	}
	return "", false
}

// fromRegistry looks norm up in registry source s for parameter p. It
// returns the registry's no-match error as it is (resolveOne tries the
// next source), ctx's error if ctx ended, and an *Error wrapping
// ErrUnavailable for a registry missing, failing or giving an empty value.
func (r Resolver) fromRegistry(ctx context.Context, p *contract.Parameter, s contract.Source, owner intent.Owner, norm string, before []intent.Resolved) (intent.Resolved, map[string]intent.Value, error) {
	reg := r.Registries[s.Name]
	if reg == nil {
		return intent.Resolved{}, nil, &Error{Param: p.Name, Detail: fmt.Sprintf("trusted source %s is not configured", s), Err: ErrUnavailable}
	}
	rec, err := lookup(ctx, reg, owner, norm, before)
	if errors.Is(err, ErrNoMatch) {
		return intent.Resolved{}, nil, err
	}
	if err != nil {
		if ctx.Err() != nil {
			return intent.Resolved{}, nil, ctx.Err()
		}
		return intent.Resolved{}, nil, &Error{Param: p.Name, Detail: fmt.Sprintf("trusted source %s could not be read", s), Err: ErrUnavailable}
	}
	if rec.Value == "" {
		return intent.Resolved{}, nil, &Error{Param: p.Name, Detail: fmt.Sprintf("trusted source %s returned an empty value", s), Err: ErrUnavailable}
	}
	return intent.Resolved{
		Param: p.Name, Value: rec.Value,
		Provenance: intent.Provenance{Source: s.String(), RecordID: rec.ID, Version: rec.Version, At: rec.At.UTC()},
	}, rec.Attrs, nil
}

// lookup calls reg's LookupIn with the values resolved before, if it is a
// ScopedRegistry, and its Lookup otherwise.
func lookup(ctx context.Context, reg Registry, owner intent.Owner, value string, before []intent.Resolved) (Record, error) {
	sr, ok := reg.(ScopedRegistry)
	if !ok {
		return reg.Lookup(ctx, owner, value)
	}
	resolved := make(map[string]string, len(before))
	for _, b := range before {
		resolved[b.Param] = b.Value
	}
	return sr.LookupIn(ctx, owner, value, resolved)
}

// NoMatch returns an error wrapping ErrNoMatch for a registry to return
// when it must say why no record matches: detail ("names two vendors on
// file, IDs 7 and 9: name the vendor by its ID") replaces the generic
// words in the refusal. It must name only the owner's records.
func NoMatch(detail string) error { return &noMatchError{detail} }

type noMatchError struct{ detail string }

func (e *noMatchError) Error() string { return "resolve: " + e.detail }
func (e *noMatchError) Unwrap() error { return ErrNoMatch }
