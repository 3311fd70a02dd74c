package messaging

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// The kinds of outbound message requests. A request's kind is the first
// part of its request hash, so a send and a template send never match.
const (
	kindSend     = "send"
	kindTemplate = "template"
)

// requestHash returns the hash of the request that created msg, of kind
// kindSend or kindTemplate: a repeat under the same idempotency key must
// have the same hash. It is SHA-256 over the kind, a NUL byte and the JSON
// of the request's canonical form (sendFingerprint or
// templateFingerprint), in hex.
//
// The hashes are stored with the messages and compared with the requests of
// later releases, so their bytes are frozen: the fingerprint types below
// keep the member names, order and omitempty of the params structs whose
// JSON was hashed when idempotency keys were introduced, independent of the
// JSON tags of the public types. Never change them; TestRequestHashIsFrozen
// pins their output.
func requestHash(kind string, msg *Message) (string, error) {
	var v any
	if kind == kindTemplate {
		v = templateFingerprint{To: msg.To, TemplateName: msg.TemplateName, Language: msg.Language, Components: componentFingerprints(msg.Components)}
	} else {
		v = sendFingerprint{Channel: msg.Channel, To: msg.To, Type: msg.Type, Text: msg.Text,
			MediaURL: msg.MediaURL, Caption: msg.Caption, Filename: msg.Filename}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(kind+"\x00"), b...))
	return hex.EncodeToString(sum[:]), nil
}

// sendFingerprint is the canonical form of a send: the validated fields,
// the recipient in its canonical form. (The request form it was frozen
// from also had idempotency_key, template_name, language and components,
// all omitempty and always empty in a hashed request: the key was cleared
// and template fields refused, so they never appeared in the bytes.)
type sendFingerprint struct {
	Channel  string `json:"channel"`
	To       string `json:"to"`
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MediaURL string `json:"media_url,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// templateFingerprint is the canonical form of a template send: the
// recipient in its canonical form and the language with its default
// applied. (The request form it was frozen from also had idempotency_key,
// omitempty and always cleared.)
type templateFingerprint struct {
	To           string                 `json:"to"`
	TemplateName string                 `json:"template_name"`
	Language     string                 `json:"language"`
	Components   []componentFingerprint `json:"components,omitempty"`
}

// componentFingerprint is the canonical form of a SendComponent.
type componentFingerprint struct {
	Type       string                 `json:"type"`
	SubType    string                 `json:"sub_type,omitempty"`
	Index      *int                   `json:"index,omitempty"`
	Parameters []parameterFingerprint `json:"parameters"`
}

// parameterFingerprint is the canonical form of a SendParameter.
type parameterFingerprint struct {
	Type       string `json:"type"`
	Text       string `json:"text,omitempty"`
	Link       string `json:"link,omitempty"`
	Filename   string `json:"filename,omitempty"`
	CouponCode string `json:"coupon_code,omitempty"`
	Payload    string `json:"payload,omitempty"`
}

// componentFingerprints returns the canonical form of cs. A nil slice stays
// nil and an empty one empty, as their JSON differs (null and []).
func componentFingerprints(cs []SendComponent) []componentFingerprint {
	if cs == nil {
		return nil
	}
	out := make([]componentFingerprint, len(cs))
	for i, c := range cs {
		out[i] = componentFingerprint{Type: c.Type, SubType: c.SubType, Index: c.Index}
		if c.Parameters != nil {
			out[i].Parameters = make([]parameterFingerprint, len(c.Parameters))
		}
		for j, p := range c.Parameters {
			out[i].Parameters[j] = parameterFingerprint{Type: p.Type, Text: p.Text, Link: p.Link, Filename: p.Filename,
				CouponCode: p.CouponCode, Payload: p.Payload}
		}
	}
	return out
}
