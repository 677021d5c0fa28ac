// Package contract describes what an action accepts: its parameters, their
// types, which are critical and from which trusted sources a critical value
// may come. It also decodes an agent's proposal strictly against a contract:
// only "action" and "args", no unknown or duplicate keys anywhere, exact
// types, bounded sizes, and amounts as exact decimals converted to integer
// minor units (no float ever touches money).
//
// It imports only the standard library and core/intent; it must never import
// anything outside core/.
package contract
