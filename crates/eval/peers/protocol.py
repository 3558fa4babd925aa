"""What every evaluation peer shares, whatever its DDS: the protocol's output lines, its
lifecycle (duration and signals) and the interface it is confined to (README.md)."""

import fcntl
import json
import signal
import socket
import struct
import sys
import time

SIOCGIFFLAGS = 0x8913
SIOCGIFADDR = 0x8915
IFF_UP = 0x1
IFF_RUNNING = 0x40


def emit(line: dict) -> None:
    """One protocol line on stdout, flushed at once: the evaluation reads them as they come."""
    print(json.dumps(line, separators=(",", ":")), flush=True)


class Stop:
    """When a run ends: at `seconds` (None: never) or on SIGTERM/SIGINT, which only set a flag
    so the run ends between samples and its last lines are still printed."""

    def __init__(self, seconds):
        self.requested = False
        self.deadline = None if seconds is None else time.monotonic() + seconds
        signal.signal(signal.SIGTERM, self.request)
        signal.signal(signal.SIGINT, self.request)

    def request(self, *_):
        self.requested = True

    def due(self) -> bool:
        return self.requested or (self.deadline is not None and time.monotonic() >= self.deadline)


def interface_with(address: str):
    """(name, running) of the interface holding IPv4 `address`, or None if none does."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            try:
                local = socket.inet_ntoa(fcntl.ioctl(s.fileno(), SIOCGIFADDR, request)[20:24])
            except OSError:
                continue  # no IPv4 address
            if local != address:
                continue
            flags = struct.unpack("H", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, request)[16:18])[0]
            return name, flags & IFF_UP != 0 and flags & IFF_RUNNING != 0
    return None


def wait_for_interface(program: str, address: str, timeout: float = 10.0) -> None:
    """Waits until the interface holding `address` runs (has a carrier), or exits naming it.

    A veth is up a moment before its carrier is (up to a second, measured here), and Fast DDS
    drops an allow-listed interface that is not running when the participant starts, leaving a
    peer that is `ready` but deaf; so every peer waits rather than starting half-configured."""
    deadline = time.monotonic() + timeout
    while True:
        found = interface_with(address)
        if found is not None and found[1]:
            return
        if time.monotonic() >= deadline:
            why = "no interface has this address" if found is None else f"{found[0]} is not running (no carrier)"
            sys.exit(f"{program}: --interface {address}: {why} after {timeout:.0f} s")
        time.sleep(0.05)
