// Package clientaddr finds the address a request's client is counted
// under by rate limits, the one rule the REST surface and the dashboard
// share for requests that come through reverse proxies.
package clientaddr

import (
	"net/http"
	"net/netip"
	"strings"
)

// Of returns the address r's client is counted under: the connection's
// peer, or, when the peer is one of trusted (a reverse proxy), the
// right-most X-Forwarded-For entry that is not itself a trusted proxy (as
// nginx's realip module with real_ip_recursive). Entries a client wrote to
// the left of it are never believed, so a client cannot choose its
// address. An unreadable entry stops the walk at the last address
// believed. An IPv6 address counts as its /64, the block one subscriber
// usually holds.
func Of(r *http.Request, trusted []netip.Prefix) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	addr := ap.Addr().Unmap().WithZone("")
	if Trusts(trusted, addr) {
		var hops []string
		for _, v := range r.Header.Values("X-Forwarded-For") {
			hops = append(hops, strings.Split(v, ",")...)
		}
		for i := len(hops) - 1; i >= 0; i-- {
			a, ok := parseHop(strings.TrimSpace(hops[i]))
			if !ok {
				break
			}
			addr = a
			if !Trusts(trusted, addr) {
				break
			}
		}
	}
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String()
	}
	return addr.String()
}

// Peer returns the prefix of r's connection peer alone (nil when
// RemoteAddr is not an address): trusting it trusts the one proxy the
// request came through, whatever its address.
func Peer(r *http.Request) []netip.Prefix {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return nil
	}
	a := ap.Addr().Unmap().WithZone("")
	return []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}
}

// parseHop reads an X-Forwarded-For entry: an address, with or without a
// port.
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}

// Trusts reports whether a is in one of trusted.
func Trusts(trusted []netip.Prefix, a netip.Addr) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
