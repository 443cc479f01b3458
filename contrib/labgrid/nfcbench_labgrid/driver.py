"""``NFCBenchDriver``: run nfcbench on a reader of a labgrid place.

In an environment file::

    imports:
      - nfcbench_labgrid.driver
    targets:
      main:
        resources:
          RemotePlace:
            name: nfc-b1
        drivers:
          NFCBenchDriver:
            nfcbench: .build/debug/nfcbench

It binds the place's ``NetworkSerialPort`` (a PN532 behind ser2net) or ``NetworkPCSCDaemon``
(a pcscd relay). Activating it makes the local end (a pty behind the RFC 2217 bridge, or a
relayed pcscd socket) in a private temporary folder; ``run(ARGS)`` runs nfcbench with
``--device`` set to it and returns a ``RunResult`` (exit status, stdout, its JSON records,
whether the link was lost); deactivating it stops the link by PID and removes the folder.
The place must be acquired first (``labgrid-client -p PLACE acquire``), as for any labgrid
driver.
"""

import os
import shutil
import tempfile

import attr

from labgrid.driver.common import Driver
from labgrid.factory import target_factory
from labgrid.util.proxy import proxymanager

from . import resources  # noqa: F401  (registers NetworkPCSCDaemon)
from .links import Endpoint, LinkError, open_link, port_open
from .runner import run_on_link, summarize


class ReaderReleased(Exception):
    """The reader's port closed while nfcbench used it: the place was released (or the
    exporter ended). The run proves nothing about the reader."""


def endpoint_of(resource, name=""):
    """The Endpoint of a bound labgrid resource (through proxymanager: an isolated exporter's
    port is reached over SSH)."""
    host_port = proxymanager.get_host_and_port(resource)
    params = {k: getattr(resource, k) for k in ("host", "port", "speed", "protocol", "reader") if hasattr(resource, k)}
    params["extra"] = getattr(resource, "extra", None) or {}
    return Endpoint.from_params(type(resource).__name__, params, name, host_port)


def default_nfcbench():
    return os.environ.get("NFCBENCH") or shutil.which("nfcbench") or "nfcbench"


@target_factory.reg_driver
@attr.s(eq=False)
class NFCBenchDriver(Driver):
    """Runs nfcbench against the place's reader (see the module's docs)."""

    bindings = {"reader": {"NetworkSerialPort", "NetworkPCSCDaemon"}}
    nfcbench = attr.ib(default=None, validator=attr.validators.optional(attr.validators.instance_of(str)))
    timeout = attr.ib(default=120.0, converter=float)

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.link = None
        self.folder = None

    def on_activate(self):
        endpoint = endpoint_of(self.reader, getattr(self.reader, "name", "") or "")
        self.folder = tempfile.mkdtemp(prefix="nfcbench-lg.")
        try:
            self.link = open_link(endpoint, self.folder, "reader")
        except Exception:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
            raise

    def on_deactivate(self):
        if self.link is not None:
            self.link.stop()
            self.link = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    @property
    def device(self):
        """nfcbench's --device for this reader while the driver is active."""
        return self.link.device if self.link else None

    @Driver.check_active
    def run(self, *args, timeout=None, env=None):
        """Run ``nfcbench ARGS --device DEVICE``; a RunResult. Raises ReaderReleased when the
        reader's port closed under the run."""
        nfcbench = self.nfcbench or default_nfcbench()
        result = run_on_link(nfcbench, args, self.link, env=env, timeout=timeout or self.timeout)
        result.summary = summarize(result.records)
        ep = self.link.endpoint
        if result.link_lost or (not result.ok and ep.kind == "pcsc" and not port_open(ep.host, ep.port)):
            raise ReaderReleased(f"{ep.host}:{ep.port} closed while nfcbench ran: {result.link_reason or 'the exporter closed the port'}")
        return result


__all__ = ["NFCBenchDriver", "ReaderReleased", "LinkError", "endpoint_of"]
