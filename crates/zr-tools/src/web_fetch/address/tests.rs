//! The address classifier over a table of addresses: IPv4, IPv6 and the
//! IPv6 forms that carry an IPv4 address.

use super::AddressClass::{
    Benchmarking, Broadcast, Documentation, LinkLocal, Loopback, Multicast, Private, Reserved,
    SharedAddressSpace, UniqueLocal, Unspecified,
};
use super::*;

/// Every address of the table with the class it must get (`None`: public).
const TABLE: &[(&str, Option<AddressClass>)] = &[
    // IPv4 public.
    ("1.1.1.1", None),
    ("8.8.8.8", None),
    ("93.184.216.34", None),
    ("172.15.255.255", None),
    ("172.32.0.0", None),
    ("100.63.255.255", None),
    ("100.128.0.0", None),
    ("169.253.255.255", None),
    ("192.169.0.1", None),
    ("198.17.255.255", None),
    ("198.20.0.0", None),
    ("223.255.255.255", None),
    // IPv4 refused.
    ("127.0.0.1", Some(Loopback)),
    ("127.255.255.254", Some(Loopback)),
    ("0.0.0.0", Some(Unspecified)),
    ("0.1.2.3", Some(Unspecified)),
    ("10.0.0.1", Some(Private)),
    ("10.255.255.255", Some(Private)),
    ("172.16.0.1", Some(Private)),
    ("172.31.255.255", Some(Private)),
    ("192.168.1.1", Some(Private)),
    ("169.254.169.254", Some(LinkLocal)),
    ("169.254.0.1", Some(LinkLocal)),
    ("100.64.0.1", Some(SharedAddressSpace)),
    ("100.127.255.255", Some(SharedAddressSpace)),
    ("224.0.0.1", Some(Multicast)),
    ("239.255.255.250", Some(Multicast)),
    ("255.255.255.255", Some(Broadcast)),
    ("240.0.0.1", Some(Reserved)),
    ("255.255.255.254", Some(Reserved)),
    ("192.0.0.8", Some(Reserved)),
    ("192.88.99.1", Some(Reserved)),
    ("192.0.2.1", Some(Documentation)),
    ("198.51.100.7", Some(Documentation)),
    ("203.0.113.9", Some(Documentation)),
    ("198.18.0.1", Some(Benchmarking)),
    ("198.19.255.255", Some(Benchmarking)),
    // IPv6 public.
    ("2606:4700:4700::1111", None),
    ("2001:4860:4860::8888", None),
    ("2a00:1450:4001:82b::200e", None),
    ("3fff:ffff::1", None),
    // IPv6 refused.
    ("::1", Some(Loopback)),
    ("::", Some(Unspecified)),
    ("fe80::1", Some(LinkLocal)),
    ("febf:ffff::1", Some(LinkLocal)),
    ("fec0::1", Some(Private)),
    ("fc00::1", Some(UniqueLocal)),
    ("fd12:3456:789a::1", Some(UniqueLocal)),
    ("ff02::1", Some(Multicast)),
    ("ff0e::1", Some(Multicast)),
    ("2001:db8::1", Some(Documentation)),
    ("2001:2::1", Some(Benchmarking)),
    ("2001::1", Some(Reserved)),
    ("100::1", Some(Reserved)),
    ("4000::1", Some(Reserved)),
    ("64:ff9b:1::1", Some(Reserved)),
    // IPv6 carrying IPv4: judged by the IPv4 address.
    ("::ffff:127.0.0.1", Some(Loopback)),
    ("::ffff:7f00:1", Some(Loopback)),
    ("::ffff:10.1.2.3", Some(Private)),
    ("::ffff:169.254.169.254", Some(LinkLocal)),
    ("::ffff:0.0.0.0", Some(Unspecified)),
    ("::ffff:8.8.8.8", None),
    ("::127.0.0.1", Some(Loopback)),
    ("::192.168.0.1", Some(Private)),
    ("64:ff9b::127.0.0.1", Some(Loopback)),
    ("64:ff9b::a9fe:a9fe", Some(LinkLocal)),
    ("64:ff9b::8.8.8.8", None),
    ("2002:7f00:1::", Some(Loopback)),
    ("2002:a00:1::1", Some(Private)),
    ("2002:808:808::1", Some(Reserved)),
];

#[test]
fn the_table_of_addresses() {
    let mut wrong = Vec::new();
    for (text, expected) in TABLE {
        let ip: IpAddr = text.parse().expect("the table holds valid addresses");
        let got = classify(ip);
        if got != *expected {
            wrong.push(format!("{text}: expected {expected:?}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn classes_read_as_words() {
    assert_eq!(Loopback.to_string(), "a loopback address (this machine)");
    assert!(LinkLocal.to_string().contains("169.254.169.254"));
}
