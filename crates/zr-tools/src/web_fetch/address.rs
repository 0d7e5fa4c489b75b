//! Which IP addresses are not on the public internet: the classifier
//! `WebFetch` asks about every address it would connect to.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not a public internet address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddressClass {
    /// `127.0.0.0/8`, `::1`: this machine.
    Loopback,
    /// `0.0.0.0`, `::` (connecting to them reaches this machine) and the
    /// rest of `0.0.0.0/8`.
    Unspecified,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, and the deprecated
    /// IPv6 site-local `fec0::/10`.
    Private,
    /// `169.254.0.0/16` (cloud metadata services live at 169.254.169.254),
    /// `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`.
    UniqueLocal,
    /// Carrier-grade NAT, `100.64.0.0/10`.
    SharedAddressSpace,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// Everything else outside the public unicast space: `240.0.0.0/4`,
    /// `192.0.0.0/24`, `192.88.99.0/24`, IPv6 outside `2000::/3` (other
    /// than the forms that embed an IPv4 address), `2001::/23` and the
    /// 6to4 / Teredo / local NAT64 prefixes around it.
    Reserved,
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Loopback => "a loopback address (this machine)",
            Self::Unspecified => "an unspecified address (0.0.0.0 or ::, which reach this machine)",
            Self::Private => "a private network address",
            Self::LinkLocal => {
                "a link-local address (cloud metadata services live at 169.254.169.254)"
            }
            Self::UniqueLocal => "a unique-local (private IPv6) address",
            Self::SharedAddressSpace => "a carrier-grade NAT address (100.64.0.0/10)",
            Self::Multicast => "a multicast address",
            Self::Broadcast => "the broadcast address",
            Self::Documentation => "a documentation-only address",
            Self::Benchmarking => "a benchmarking-only address",
            Self::Reserved => "a reserved address (not public unicast)",
        })
    }
}

/// `None` for a public unicast address; otherwise why it is not one.
///
/// IPv6 addresses that carry an IPv4 address (mapped `::ffff:a.b.c.d`,
/// compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`) are judged by that IPv4
/// address, so `::ffff:127.0.0.1` is loopback. 6to4 (`2002::/16`,
/// deprecated) is never public: it is described by its IPv4 address when
/// that one is not public either, as reserved otherwise.
pub(crate) fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, c, _] = ip.octets();
    let class = match (a, b, c) {
        _ if ip.is_broadcast() => AddressClass::Broadcast,
        (0, ..) => AddressClass::Unspecified,
        (10, ..) | (172, 16..=31, _) | (192, 168, _) => AddressClass::Private,
        (100, 64..=127, _) => AddressClass::SharedAddressSpace,
        (127, ..) => AddressClass::Loopback,
        (169, 254, _) => AddressClass::LinkLocal,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddressClass::Documentation,
        (198, 18..=19, _) => AddressClass::Benchmarking,
        (192, 0, 0) | (192, 88, 99) | (240..=255, ..) => AddressClass::Reserved,
        (224..=239, ..) => AddressClass::Multicast,
        _ => return None,
    };
    Some(class)
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    if ip.is_loopback() {
        return Some(AddressClass::Loopback);
    }
    if ip.is_unspecified() {
        return Some(AddressClass::Unspecified);
    }
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    let class = match s {
        // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d.
        [0, 0, 0, 0, 0, 0xffff | 0, hi, lo] => return classify_v4(embedded(hi, lo)),
        // NAT64 well-known prefix: reaches the embedded IPv4 address.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return classify_v4(embedded(hi, lo)),
        // 6to4: a relay would reach the embedded IPv4 address.
        [0x2002, hi, lo, ..] => {
            return classify_v4(embedded(hi, lo)).or(Some(AddressClass::Reserved));
        }
        [0x2001, 0x0db8, ..] => AddressClass::Documentation,
        [0x2001, 0x0002, 0, ..] => AddressClass::Benchmarking,
        [first, ..] if first & 0xfe00 == 0xfc00 => AddressClass::UniqueLocal,
        [first, ..] if first & 0xffc0 == 0xfe80 => AddressClass::LinkLocal,
        [first, ..] if first & 0xffc0 == 0xfec0 => AddressClass::Private,
        [first, ..] if first & 0xff00 == 0xff00 => AddressClass::Multicast,
        // 2001::/23: IETF protocol assignments (Teredo 2001::/32 among them).
        [0x2001, second, ..] if second < 0x0200 => AddressClass::Reserved,
        // Global unicast is 2000::/3; everything else is not handed out.
        [first, ..] if first & 0xe000 != 0x2000 => AddressClass::Reserved,
        _ => return None,
    };
    Some(class)
}

#[cfg(test)]
mod tests;
