package banking

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/core/resolve"
)

// Registries of values that no trusted source holds: the agent supplied
// them (read from a bill, a letter, the history). They are the last source
// of their parameters, consulted only when the mandate and the owner's
// counterparties have no match, never in a strict mandate; a value they
// give is never executed without a person (the policy's approval guards
// on the facts recipient_read_by_agent and address_read_by_agent), and
// one that looks like an account on file is refused outright
// (recipient_looks_like_on_file). Their provenance tells the person where
// the value came from: source "registry:agent_payee" or
// "registry:agent_address", record "read by the agent, not on file", or,
// for a payee named by a name, the owner's payment whose subject names it.
const (
	RegistryAgentPayee   = "agent_payee"
	RegistryAgentAddress = "agent_address"
)

// NotOnFile is the record ID of a value that the agent supplied.
const NotOnFile = "read by the agent, not on file"

// maxName is the longest payee name, in bytes.
const maxName = 64

// Payee normalizes a recipient: an account number (normalize.AccountNumber)
// or, for a text that is not one, a payee name: lower-cased, inner spaces
// collapsed, 1 to 64 bytes of ASCII letters, digits, spaces and . & ' -,
// with more letters than digits and not in the shape of an account number
// (two letters then two digits, spaces and hyphens aside), so that a
// mistyped IBAN is refused as one ("Apple" becomes "apple"). A text of
// letters alone is a name even where an account number could be spelled
// with letters only. A name is resolved
// only by the agent_payee registry, to the account of the owner's own
// payments whose subject names it. It returns the account number's error
// for a text that is neither. Payee is idempotent.
func Payee(s string) (string, error) {
	name, isName := payeeName(s)
	if isName && !strings.ContainsAny(name, "0123456789") {
		return name, nil // words only: "Mallory Ltd" is not account MALLORYLTD
	}
	acct, err := normalize.AccountNumber(s)
	if err == nil {
		return acct, nil
	}
	if isName {
		return name, nil
	}
	return "", err
}

// payeeName returns s as a payee name, or false if it is not one.
func payeeName(s string) (string, bool) {
	name := strings.ToLower(strings.Join(strings.Fields(s), " "))
	if name == "" || len(name) > maxName {
		return "", false
	}
	letters, digits := 0, 0
	for _, c := range []byte(name) {
		switch {
		case c >= 'a' && c <= 'z':
			letters++
		case c >= '0' && c <= '9':
			digits++
		case c == ' ', c == '.', c == '&', c == '\'', c == '-':
		default:
			return "", false
		}
	}
	return name, letters > digits && !accountShaped(name)
}

// accountShaped reports whether s, spaces and hyphens removed, starts with
// two letters and two digits, as an IBAN does.
func accountShaped(s string) bool {
	c := strings.NewReplacer(" ", "", "-", "").Replace(s)
	return len(c) >= 4 && isLetter(c[0]) && isLetter(c[1]) && isDigit(c[2]) && isDigit(c[3])
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// isAccount reports whether v, a value Payee returned, is an account
// number rather than a name.
func isAccount(v string) bool {
	n, err := normalize.AccountNumber(v)
	return err == nil && n == v
}

// AgentPayees is the registry of payees the agent supplied (registry
// "agent_payee"). An account number resolves to itself, record NotOnFile.
// A name (see Payee) resolves to the account of the owner's own payments
// (history rows the owner sent, and standing orders) whose subject holds
// the name as whole words, case folded, when they all go to one account;
// the record names the first such payment ("read by the agent, named in
// transaction:4"). Subjects of incoming payments never count: their
// sender wrote them. A name that no payment or several accounts' payments
// name is no match. The owner's own account is never a record.
type AgentPayees struct {
	Bank *Mem
}

var _ resolve.Registry = AgentPayees{}

// Lookup implements resolve.Registry. It returns an error wrapping
// resolve.ErrNoMatch, with a detail the agent can read, when value
// resolves to nothing or to several accounts, or the bank has no account
// for owner.
func (r AgentPayees) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	a, err := payer(ctx, r.Bank, owner, value)
	if err != nil {
		return resolve.Record{}, err
	}
	if isAccount(value) {
		return resolve.Record{ID: NotOnFile, Value: value}, nil
	}
	t, err := PayeeByName(a, value)
	if err != nil {
		return resolve.Record{}, resolve.NoMatch(err.Error())
	}
	return resolve.Record{ID: NotOnFile + ", named in transaction:" + strconv.FormatInt(t.ID, 10), Value: canonical(t.Recipient)}, nil
}

// PayeeByName returns the first of the owner's own payments in a (history
// rows a sent, then standing orders) whose subject holds name as whole
// words, case folded, when all such payments go to one account. Its error
// says why there is none: no payment names it, or payments to several
// accounts do.
func PayeeByName(a Account, name string) (Transaction, error) {
	name, ok := payeeName(name)
	if !ok {
		return Transaction{}, errors.New("not a payee name")
	}
	own := canonical(a.IBAN)
	var first Transaction
	found := ""
	for _, ts := range [][]Transaction{a.Transactions, a.Scheduled} {
		for _, t := range ts {
			to := canonical(t.Recipient)
			outgoing := t.Sender == "me" || canonical(t.Sender) == own
			if !outgoing || to == "" || to == own || !hasWords(t.Subject, name) {
				continue
			}
			switch found {
			case "":
				first, found = t, to
			case to:
			default:
				return Transaction{}, fmt.Errorf("payments to several accounts name %q; give the account number", name)
			}
		}
	}
	if found == "" {
		return Transaction{}, fmt.Errorf("none of the user's own payments names %q; give the account number", name)
	}
	return first, nil
}

// hasWords reports whether subject holds the words of name in a row, case
// folded, each a whole word (split at anything but letters and digits).
func hasWords(subject, name string) bool {
	words := strings.FieldsFunc(strings.ToLower(subject), notAlnum)
	want := strings.FieldsFunc(name, notAlnum)
	if len(want) == 0 {
		return false
	}
	for i := 0; i+len(want) <= len(words); i++ {
		match := true
		for j, w := range want {
			if words[i+j] != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func notAlnum(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= utf8.RuneSelf)
}

// AgentAddress is the registry of address fields the agent supplied
// (registry "agent_address"): a value resolves to itself, as written,
// record NotOnFile, so that the policy can ask the person to confirm it,
// unless a person could misread it: it must be a name that normalize.Name
// accepts (no control or invisible character, no letter that imitates
// another script's, at most 256 characters). It never reads a bank.
type AgentAddress struct{}

var _ resolve.Registry = AgentAddress{}

// Lookup implements resolve.Registry. It returns an error wrapping
// resolve.ErrNoMatch for a value that normalize.Name refuses.
func (AgentAddress) Lookup(ctx context.Context, _ intent.Owner, value string) (resolve.Record, error) {
	if err := ctx.Err(); err != nil {
		return resolve.Record{}, err
	}
	if _, err := normalize.Name(value); err != nil || strings.ContainsAny(value, "\n\r\t") {
		return resolve.Record{}, resolve.NoMatch("an address field read by the agent must be plain text on one line, without look-alike characters")
	}
	return resolve.Record{ID: NotOnFile, Value: value}, nil
}

// looksLike reports whether account v, not on file, could be taken for
// one of known: once letters that pass for digits are read as those
// digits (O 0, I and L 1, S 5, B 8, Z 2) and IBAN check digits (the
// third and fourth characters) are set aside, the two differ by at most
// two edits (insertions, deletions, substitutions, or swaps of two
// neighbours), and are not the same account.
func looksLike(v string, known []string) bool {
	fv := fold(v)
	for _, k := range known {
		if k == "" || k == v {
			continue
		}
		if editDistance(fv, fold(k)) <= 2 {
			return true
		}
	}
	return false
}

// fold returns account a without its check digits, letters that pass for
// digits read as digits.
func fold(a string) string {
	if len(a) > 4 {
		a = a[:2] + a[4:]
	}
	b := []byte(a) // account numbers are ASCII (normalize.AccountNumber)
	for i, c := range b {
		b[i] = normalize.ConfusableDigit(c)
	}
	return string(b)
}

// editDistance is the optimal string alignment distance of a and b
// (bytes): insertions, deletions, substitutions and swaps of two
// neighbours each count one.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
