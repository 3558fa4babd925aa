//! The robot's downlink, shaped on its own ingress (`direction: down` or `both`).
//!
//! Linux queues only on egress, so the interface's ingress is redirected to an IFB
//! device (`bx-IFACE`) whose egress carries the same lanes, classifier and HTB tree as an
//! uplink: a second shaper, on the IFB, at the downlink's rate (`ingress.rate` ×
//! `ingress.headroom`). The redirect is a `u32` match-all filter with `mirred egress
//! redirect` on the interface's clsact ingress hook, at preference [`REDIRECT_PREF`], as
//! sqm-scripts do: mirred hands the IFB the packet with the MAC header the interface had,
//! none on a raw-IP modem (`wwan0`), and the IFB's classifier parses it as the
//! interface's (tested over a TUN device).
//!
//! Fail-open: a killed daemon leaves the redirect and the IFB, and the IFB keeps flowing.
//! Its classifier steps aside (a tcx link dies with the daemon; a clsact filter's lease
//! expires), so every packet takes the tree's unshaped default class. `bauxite down` (and
//! the next `up`) removes the redirect first and the device after it, never the other way
//! round: a redirect to a device that is gone drops every packet.
//!
//! Ownership: the device carries the alias [`alias_of`] names; a device of that name
//! without it, or a filter at [`REDIRECT_PREF`] that does not redirect to Bauxite's device,
//! is someone else's: `up` refuses it by name, `down` leaves it.

use bauxite_sys::Netns;
use tracing::warn;

use crate::ShaperError;

/// The preference of the redirect filter on the interface's ingress hook (`0xbaba`).
pub const REDIRECT_PREF: u16 = 0xbaba;

/// The longest interface name the kernel takes (`IFNAMSIZ` less its NUL).
const MAX_IFNAME: usize = 15;

/// The IFB device that carries `iface`'s ingress: `bx-IFACE`, or, for a name too long to
/// fit, `bx-` with its first 7 characters and 4 hex digits of a hash of the whole name.
pub fn device_name(iface: &str) -> String {
    let plain = format!("bx-{iface}");
    if plain.len() <= MAX_IFNAME {
        return plain;
    }
    // FNV-1a: stable across builds and platforms, unlike std's hasher.
    let hash = iface.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    let head: String = iface.chars().take(7).collect();
    format!("bx-{head}-{:04x}", hash & 0xffff)
}

/// The alias that marks the IFB device as Bauxite's own for `iface`.
pub fn alias_of(iface: &str) -> String {
    format!("bauxite ingress of {iface}")
}

/// What `ip -d link show DEV` says of `device`, when it exists: its kind is ifb and its
/// alias is Bauxite's for `iface` (`Some(true)`), or it is someone else's (`Some(false)`).
fn device_is_ours(ns: &Netns, device: &str, iface: &str) -> Option<bool> {
    let shown = ns.ip(&["-d", "link", "show", "dev", device]).ok()?;
    let alias = shown.lines().find_map(|l| l.trim().strip_prefix("alias ")).map(str::trim);
    Some(shown.lines().any(|l| l.trim_start().starts_with("ifb")) && alias == Some(alias_of(iface).as_str()))
}

/// Whether Bauxite's IFB device for `iface` exists (a killed daemon's leftover, or a
/// running daemon's).
pub fn leftover(ns: &Netns, iface: &str) -> bool {
    device_is_ours(ns, &device_name(iface), iface) == Some(true)
}

/// The IFB device carrying `iface`'s downlink in this namespace, if Bauxite's is there.
pub fn shaped_device(iface: &str) -> Option<String> {
    leftover(&Netns::current(), iface).then(|| device_name(iface))
}

/// The redirect filter on `iface`'s ingress hook, if there is one at [`REDIRECT_PREF`]:
/// whether it redirects to Bauxite's device.
fn redirect_is_ours(ns: &Netns, iface: &str) -> Option<bool> {
    let shown = ns.tc(&["filter", "show", "dev", iface, "ingress"]).ok()?;
    if !shown.lines().any(|l| l.contains(&format!(" pref {REDIRECT_PREF} "))) {
        return None;
    }
    Some(shown.contains(&format!("Egress Redirect to device {})", device_name(iface))))
}

/// The IFB device and the redirect to it, while `up` shapes the ingress; undone in reverse
/// when dropped (the redirect first).
#[derive(Debug)]
pub struct IngressPath {
    ns: Netns,
    iface: String,
    /// The IFB device's name.
    pub device: String,
    created_clsact: bool,
    redirected: bool,
}

impl IngressPath {
    /// Makes the IFB device for `iface` in this namespace (removing a killed daemon's
    /// leftover first) and sets it up, unshaped; nothing is redirected to it yet.
    pub fn create(iface: &str) -> Result<Self, ShaperError> {
        let ns = Netns::current();
        remove(&ns, iface)?;
        let device = device_name(iface);
        if device_is_ours(&ns, &device, iface) == Some(false) {
            return Err(ShaperError::ForeignIngressDevice { iface: iface.to_string(), device });
        }
        ns.ip(&["link", "add", &device, "type", "ifb"])?;
        // From here on, dropping the path deletes the device.
        let path = Self { ns, iface: iface.to_string(), device, created_clsact: false, redirected: false };
        path.ns.ip(&["link", "set", "dev", &path.device, "alias", &alias_of(iface)])?;
        path.ns.ip(&["link", "set", "dev", &path.device, "up"])?;
        Ok(path)
    }

    /// Redirects `iface`'s ingress to the device (adding a clsact qdisc if it has none).
    pub fn redirect(&mut self) -> Result<(), ShaperError> {
        // A filter of someone else's at Bauxite's preference would be deleted with the
        // redirect: refused instead.
        if redirect_is_ours(&self.ns, &self.iface) == Some(false) {
            return Err(ShaperError::ForeignIngressFilter { iface: self.iface.clone(), pref: REDIRECT_PREF });
        }
        self.created_clsact = bauxite_ebpf::add_clsact(&self.iface);
        let pref = REDIRECT_PREF.to_string();
        self.ns.tc(&[
            "filter",
            "add",
            "dev",
            &self.iface,
            "ingress",
            "pref",
            &pref,
            "protocol",
            "all",
            "u32",
            "match",
            "u32",
            "0",
            "0",
            "action",
            "mirred",
            "egress",
            "redirect",
            "dev",
            &self.device,
        ])?;
        self.redirected = true;
        Ok(())
    }
}

impl Drop for IngressPath {
    fn drop(&mut self) {
        if std::mem::take(&mut self.redirected)
            && let Err(e) = delete_redirect(&self.ns, &self.iface)
        {
            warn!("removing the ingress redirect of {}: {e}", self.iface);
        }
        if std::mem::take(&mut self.created_clsact)
            && let Err(e) = crate::tc::delete_clsact_if_unused(&self.ns, &self.iface)
        {
            warn!("removing the clsact qdisc Bauxite added to {}: {e}", self.iface);
        }
        if let Err(e) = self.ns.ip(&["link", "del", "dev", &self.device]) {
            warn!("deleting {}: {e}", self.device);
        }
    }
}

fn delete_redirect(ns: &Netns, iface: &str) -> Result<(), bauxite_sys::SysError> {
    let pref = REDIRECT_PREF.to_string();
    ns.tc(&["filter", "del", "dev", iface, "ingress", "pref", &pref]).map(drop)
}

/// What [`remove`] took away.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Removed {
    /// The redirect filter on the interface's ingress.
    pub redirect: bool,
    /// The IFB device.
    pub device: bool,
}

/// Removes Bauxite's ingress redirect from `iface` and then its IFB device (a killed
/// daemon's, or `down`'s), the device's own tree with it. Someone else's filter or device
/// is left alone. The caller has stopped the daemon.
pub fn remove(ns: &Netns, iface: &str) -> Result<Removed, ShaperError> {
    let mut removed = Removed::default();
    if redirect_is_ours(ns, iface) == Some(true) {
        delete_redirect(ns, iface)?;
        removed.redirect = true;
        // An empty clsact qdisc does nothing; one Bauxite's egress still uses stays.
        crate::tc::delete_clsact_if_unused(ns, iface)?;
    }
    let device = device_name(iface);
    if device_is_ours(ns, &device, iface) == Some(true) {
        crate::daemon::down_one(&device)?;
        ns.ip(&["link", "del", "dev", &device])?;
        removed.device = true;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_fit_the_kernel_and_tell_interfaces_apart() {
        assert_eq!(device_name("wwan0"), "bx-wwan0");
        assert_eq!(device_name("enp0s31f6"), "bx-enp0s31f6");
        let long = ["wwp0s20f0u6i12", "wwp0s20f0u6i13", "abcdefghijklmno"];
        let names: Vec<String> = long.iter().map(|i| device_name(i)).collect();
        for name in &names {
            assert!(name.len() <= MAX_IFNAME && name.starts_with("bx-"), "{name}");
        }
        assert_eq!(names[0].len(), MAX_IFNAME);
        assert_ne!(names[0], names[1], "interfaces that share a prefix get their own device");
        assert_eq!(device_name("wwp0s20f0u6i12"), names[0], "the same name every time");
    }
}
