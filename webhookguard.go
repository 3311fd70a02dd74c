package messaging

import (
	"errors"
	"net/netip"
)

// errPrivateAddress is returned when a webhook URL resolves to a loopback,
// private or other special-purpose address that the options do not allow.
var errPrivateAddress = errors.New("webhook endpoint resolves to a loopback, private or link-local address")

// addrClass is what the webhook guard makes of an address it is about to
// dial.
type addrClass int

const (
	addrPublic   addrClass = iota // globally reachable: always allowed
	addrLoopback                  // allowed by AllowLoopback or AllowPrivate
	addrSpecial                   // allowed by AllowPrivate only
)

// specialPurpose lists the ranges of the IANA IPv4 and IPv6 Special-Purpose
// Address Registries, plus multicast, that a webhook must not reach. A
// few of them hold globally reachable sub-ranges (AS112, AMT, parts of
// 2001::/23, the NAT64 prefix); they are refused too, since no webhook
// receiver lives there. Loopback, IPv4-mapped, IPv4-compatible and 6to4
// addresses are handled by classifyAddr before this table.
var specialPurpose = []netip.Prefix{
	// IPv4
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network" (RFC 791)
	netip.MustParsePrefix("10.0.0.0/8"),         // private (RFC 1918)
	netip.MustParsePrefix("100.64.0.0/10"),      // shared address space, carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("169.254.0.0/16"),     // link-local, cloud metadata (RFC 3927)
	netip.MustParsePrefix("172.16.0.0/12"),      // private (RFC 1918)
	netip.MustParsePrefix("192.0.0.0/24"),       // IETF protocol assignments (RFC 6890)
	netip.MustParsePrefix("192.0.2.0/24"),       // documentation TEST-NET-1 (RFC 5737)
	netip.MustParsePrefix("192.31.196.0/24"),    // AS112-v4 (RFC 7535)
	netip.MustParsePrefix("192.52.193.0/24"),    // AMT (RFC 7450)
	netip.MustParsePrefix("192.88.99.0/24"),     // deprecated 6to4 relay anycast (RFC 7526)
	netip.MustParsePrefix("192.168.0.0/16"),     // private (RFC 1918)
	netip.MustParsePrefix("192.175.48.0/24"),    // direct delegation AS112 service (RFC 7534)
	netip.MustParsePrefix("198.18.0.0/15"),      // benchmarking (RFC 2544)
	netip.MustParsePrefix("198.51.100.0/24"),    // documentation TEST-NET-2 (RFC 5737)
	netip.MustParsePrefix("203.0.113.0/24"),     // documentation TEST-NET-3 (RFC 5737)
	netip.MustParsePrefix("224.0.0.0/4"),        // multicast (RFC 5771)
	netip.MustParsePrefix("240.0.0.0/4"),        // reserved (RFC 1112)
	netip.MustParsePrefix("255.255.255.255/32"), // limited broadcast (RFC 919)
	// IPv6
	netip.MustParsePrefix("::/128"),            // unspecified (RFC 4291)
	netip.MustParsePrefix("64:ff9b::/96"),      // NAT64 well-known prefix (RFC 6052)
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use NAT64 (RFC 8215)
	netip.MustParsePrefix("100::/64"),          // discard-only (RFC 6666)
	netip.MustParsePrefix("100:0:0:1::/64"),    // dummy prefix (RFC 9780)
	netip.MustParsePrefix("2001::/23"),         // IETF protocol assignments, Teredo, ORCHID (RFC 2928)
	netip.MustParsePrefix("2001:db8::/32"),     // documentation (RFC 3849)
	netip.MustParsePrefix("2620:4f:8000::/48"), // direct delegation AS112 service (RFC 7534)
	netip.MustParsePrefix("3fff::/20"),         // documentation (RFC 9637)
	netip.MustParsePrefix("5f00::/16"),         // segment routing SIDs (RFC 9602)
	netip.MustParsePrefix("fc00::/7"),          // unique local (RFC 4193)
	netip.MustParsePrefix("fe80::/10"),         // link-local (RFC 4291)
	netip.MustParsePrefix("fec0::/10"),         // deprecated site-local (RFC 3879)
	netip.MustParsePrefix("ff00::/8"),          // multicast (RFC 4291)
}

var (
	ipv4Compatible = netip.MustParsePrefix("::/96")     // deprecated (RFC 4291)
	sixToFour      = netip.MustParsePrefix("2002::/16") // 6to4 (RFC 3056)
)

// classifyAddr tells whether a webhook may dial a, following the IANA
// special-purpose registries. IPv4-mapped and IPv4-compatible IPv6
// addresses are judged by their IPv4 part, 6to4 addresses by the IPv4
// address they embed; such a translated address is at best addrSpecial,
// never loopback.
func classifyAddr(a netip.Addr) addrClass {
	a = a.WithZone("")
	switch {
	case !a.IsValid():
		return addrSpecial
	case a.Is4In6():
		return classifyAddr(a.Unmap())
	case a.IsLoopback():
		return addrLoopback
	case a.Is6() && ipv4Compatible.Contains(a) && a != netip.IPv6Unspecified():
		b := a.As16()
		return atLeastSpecial(classifyAddr(netip.AddrFrom4([4]byte(b[12:16]))))
	case sixToFour.Contains(a):
		b := a.As16()
		return atLeastSpecial(classifyAddr(netip.AddrFrom4([4]byte(b[2:6]))))
	}
	for _, p := range specialPurpose {
		if p.Contains(a) {
			return addrSpecial
		}
	}
	return addrPublic
}

// atLeastSpecial turns loopback into special: an address that only embeds
// a loopback address is not itself loopback.
func atLeastSpecial(c addrClass) addrClass {
	if c == addrLoopback {
		return addrSpecial
	}
	return c
}

// webhookAddressAllowed reports whether a webhook delivery may connect to
// host (an IP address in text, as the dialer gives it) under o.
func webhookAddressAllowed(host string, o WebhookOptions) bool {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	switch classifyAddr(a) {
	case addrPublic:
		return true
	case addrLoopback:
		return o.AllowLoopback || o.AllowPrivate
	default:
		return o.AllowPrivate
	}
}
