package intent

import "bytes"

// Assertion is a WebAuthn assertion as the authenticator returned it: the
// evidence that a registered passkey, with its user verified, signed a
// challenge. Core only carries its bytes (in approvals and receipts); the
// approval page and `intentplane receipts verify` check it (package
// approvals/passkey). The zero Assertion means none.
type Assertion struct {
	// CredentialID identifies the passkey (the credential's raw ID).
	CredentialID []byte `json:",omitempty"`
	// AuthenticatorData is the authenticator data signed (RP ID hash,
	// flags, signature counter), as returned.
	AuthenticatorData []byte `json:",omitempty"`
	// ClientDataJSON is the browser's client data (type, challenge,
	// origin), byte for byte as returned: its SHA-256 is signed.
	ClientDataJSON []byte `json:",omitempty"`
	// Signature is the signature over AuthenticatorData ||
	// SHA-256(ClientDataJSON), in the credential's algorithm's encoding.
	Signature []byte `json:",omitempty"`
}

// IsZero reports whether a holds no bytes at all.
func (a Assertion) IsZero() bool {
	return len(a.CredentialID) == 0 && len(a.AuthenticatorData) == 0 && len(a.ClientDataJSON) == 0 && len(a.Signature) == 0
}

// Equal reports whether a and b hold the same bytes.
func (a Assertion) Equal(b Assertion) bool {
	return bytes.Equal(a.CredentialID, b.CredentialID) && bytes.Equal(a.AuthenticatorData, b.AuthenticatorData) &&
		bytes.Equal(a.ClientDataJSON, b.ClientDataJSON) && bytes.Equal(a.Signature, b.Signature)
}
