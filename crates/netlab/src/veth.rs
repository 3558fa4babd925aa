//! Veth links between network namespaces.

use bauxite_sys::Netns;

use crate::NetlabError;

/// Joins two namespaces with a veth pair and gives each end an address (`a.b.c.d/nn`).
pub fn connect(
    a: &Netns,
    a_iface: &str,
    a_addr: &str,
    b: &Netns,
    b_iface: &str,
    b_addr: &str,
) -> Result<(), NetlabError> {
    veth(a, a_iface, b, b_iface)?;
    for (ns, iface, addr) in [(a, a_iface, a_addr), (b, b_iface, b_addr)] {
        ns.ip(&["addr", "add", addr, "dev", iface])?;
    }
    Ok(())
}

/// Joins two namespaces (or one with itself) with a veth pair, both ends up and without
/// addresses: for ports of a Linux bridge or of a bridging link emulator.
pub fn veth(a: &Netns, a_iface: &str, b: &Netns, b_iface: &str) -> Result<(), NetlabError> {
    let (Some(a_name), Some(b_name)) = (a.name(), b.name()) else {
        return Err(NetlabError::Unnamed("a veth pair joins two named namespaces"));
    };
    Netns::current().ip(&[
        "link", "add", "name", a_iface, "netns", a_name, "type", "veth", "peer", "name", b_iface, "netns", b_name,
    ])?;
    for (ns, iface) in [(a, a_iface), (b, b_iface)] {
        ns.ip(&["link", "set", iface, "up"])?;
    }
    Ok(())
}
