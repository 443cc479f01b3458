"""One nfcbench command on many places, in parallel, through labgrid's client API in-process.

For each place: reserve it by name (the coordinator queues the reservation while someone else
holds the place), wait for the allocation, acquire, make the link, run nfcbench, release,
cancel the reservation. Every place runs at once; the coordinator calls go over one gRPC
session (``labgrid.remote.client.ClientSession``), not a ``labgrid-client`` process per step.
A reservation is waited for on the coordinator's place updates (the session subscribes to all
places), with a deadline; the reservation is refreshed while it waits (it expires after 60 s
unpolled).

A reader passes when nfcbench exits 0, its link held to the end, the place was still ours at
the end, and, when the place has a ``uid`` tag (the tag lying on the reader) and nfcbench
reported a detection (``session --json``), the UID it detected is that one (``uid_checked``
says whether it could be checked). A matrix that matches no place fails: zero readers is not a pass.
"""

import asyncio
import concurrent.futures
import json
import shutil
import sys
import tempfile
import time

import grpc

from labgrid.factory import target_factory
from labgrid.remote.client import ClientSession
from labgrid.remote.common import Reservation, ReservationState
from labgrid.remote.generated import labgrid_coordinator_pb2 as pb
from labgrid.remote.generated import labgrid_coordinator_pb2_grpc
from labgrid.util.proxy import proxymanager

from . import resources  # noqa: F401  (registers NetworkPCSCDaemon for endpoint_of)
from .driver import endpoint_of
from .links import LinkError, PendingBridge, open_link, port_open
from .runner import run_on_link, summarize

READER_CLASSES = ("NetworkSerialPort", "NetworkPCSCDaemon")
# labgrid's client channel options (remote/client.py), and a subchannel pool of our own.
CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 7500),
    ("grpc.keepalive_timeout_ms", 10000),
    ("grpc.http2.ping_timeout_ms", 10000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.use_local_subchannel_pool", 1),
]
RESERVATION_REFRESH = 10.0  # seconds between PollReservation calls while waiting (expiry: 60 s)


class MatrixError(Exception):
    pass


class WatchingSession(ClientSession):
    """A ClientSession that wakes waiters on every place or resource update from the coordinator."""

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.place_changed = asyncio.Condition()
        # gRPC shares one connection between channels to the same address by default, and the
        # coordinator keys client sessions by the connection's peer address (it asserts a
        # peer has one session): a second session in this process (a matrix beside pytest's
        # labgrid session) needs a connection of its own.
        self._default_channel = self.channel
        self.channel = grpc.aio.insecure_channel(target=self.address, options=CHANNEL_OPTIONS)
        self.stub = labgrid_coordinator_pb2_grpc.CoordinatorStub(self.channel)

    async def start(self):
        await self._default_channel.close()
        await super().start()

    async def on_place_changed(self, place_pb2):
        await super().on_place_changed(place_pb2)
        async with self.place_changed:
            self.place_changed.notify_all()

    async def on_resource_changed(self, exporter, group_name, resource_name, resource):
        await super().on_resource_changed(exporter, group_name, resource_name, resource)
        async with self.place_changed:
            self.place_changed.notify_all()

    @property
    def identity(self):
        return f"{self.gethostname()}/{self.getuser()}"

    async def wait_place_update(self, timeout):
        async with self.place_changed:
            try:
                await asyncio.wait_for(self.place_changed.wait(), timeout)
            except asyncio.TimeoutError:
                pass


async def open_session(address):
    loop = asyncio.get_running_loop()
    address = proxymanager.get_grpc_address(address, default_port=20408)
    session = WatchingSession(address, loop)
    await session.start()
    return session


async def close_session(session):
    await session.stop()
    await session.close()


def match_places(session, tags):
    """Names of the places whose tags include every ``key=value`` of ``tags`` (the
    reservation filter's rule; ``name=P`` matches the place P)."""
    out = []
    for name, place in sorted(session.places.items()):
        have = dict(place.tags)
        have["name"] = name
        if all(have.get(k) == v for k, v in tags.items()):
            out.append(name)
    return out


def reader_endpoint(session, place):
    """The one reader resource of an acquired place, as an Endpoint."""
    found = []
    for (name, cls), entry in session.get_target_resources(place).items():
        if cls in READER_CLASSES:
            found.append((name, cls, entry))
    if len(found) != 1:
        names = ", ".join(f"{n} ({c})" for n, c, _ in found) or "none"
        raise MatrixError(f"place {place.name} must have exactly one reader resource "
                          f"({' or '.join(READER_CLASSES)}); it has {names}")
    name, cls, entry = found[0]
    res = target_factory.class_from_string(cls)(target=None, name=name, **entry.args)
    res.extra = entry.extra
    return endpoint_of(res, name)


def wants_pending_bridge(session, place):
    """Whether the place's reader is an RFC 2217 serial port (known before the place is
    acquired: the exporter publishes its class and protocol, not yet its port)."""
    if place is None:
        return False
    try:
        entries = session.get_target_resources(place)
    except Exception:  # noqa: BLE001  (no match yet: decided after the acquire)
        return False
    found = [(cls, entry) for (_, cls), entry in entries.items() if cls in READER_CLASSES]
    return (len(found) == 1 and found[0][0] == "NetworkSerialPort"
            and (found[0][1].args.get("protocol") or "rfc2217") == "rfc2217")


class PlaceRun:
    """One place's way through the matrix, and its JSON line."""

    def __init__(self, session, name, nfcbench, args, folder, executor, timeout, wait_timeout, log, on_output=None,
                 held=False):
        self.session = session
        self.name = name
        self.nfcbench = nfcbench
        self.args = args
        self.folder = folder
        self.executor = executor
        self.timeout = timeout
        self.wait_timeout = wait_timeout
        self.log = log
        self.on_output = on_output
        self.held = held  # already acquired by us: use it, leave it acquired
        self.token = None
        self.acquired = False
        self.pending = None  # a PendingBridge started while the place is reserved and acquired
        self.line = {"record": "reader", "place": name}
        self.result = None

    def place(self):
        return self.session.places.get(self.name)

    async def reserve_and_wait(self):
        reply = await self.session.stub.CreateReservation(pb.CreateReservationRequest(
            filters={"main": pb.Reservation.Filter(filter={"name": self.name})}, prio=0))
        self.token = Reservation.from_pb2(reply.reservation).token
        start = time.monotonic()
        deadline = start + self.wait_timeout
        said = False
        last_poll = start
        while True:
            place = self.place()
            if place is not None and place.reservation == self.token:
                break
            now = time.monotonic()
            if now - last_poll >= RESERVATION_REFRESH or place is None:
                reply = await self.session.stub.PollReservation(pb.PollReservationRequest(token=self.token))
                last_poll = now
                res = Reservation.from_pb2(reply.reservation)
                if res.state in (ReservationState.allocated, ReservationState.acquired):
                    break
                if res.state not in (ReservationState.waiting,):
                    raise MatrixError(f"reservation for {self.name} is {res.state.name}")
            if not said and place is not None and place.acquired:
                self.log(f"{self.name}: held by {place.acquired}; waiting (up to {self.wait_timeout:g} s)")
                self.line["waited_for"] = place.acquired
                said = True
            if now >= deadline:
                holder = place.acquired if place is not None else "?"
                raise MatrixError(f"{self.name} still held by {holder} after {self.wait_timeout:g} s")
            await self.session.wait_place_update(min(RESERVATION_REFRESH, deadline - now))
        waited = time.monotonic() - start
        self.line["wait_s"] = round(waited, 3)
        if said:
            self.log(f"{self.name}: allocated after {waited:.2f} s")

    async def acquire(self):
        await self.session.stub.AcquirePlace(pb.AcquirePlaceRequest(placename=self.name))
        self.acquired = True
        await self.session.sync_with_coordinator()

    async def release(self):
        if self.acquired:
            self.acquired = False
            try:
                # fromuser: release it only if it is still ours (a place someone kicked us off
                # and then took is theirs).
                await self.session.stub.ReleasePlace(pb.ReleasePlaceRequest(
                    placename=self.name, fromuser=self.session.identity))
            except Exception as e:  # noqa: BLE001  (report, and still cancel the reservation)
                self.log(f"{self.name}: release failed: {e}")
        if self.token:
            token, self.token = self.token, None
            try:
                await self.session.stub.CancelReservation(pb.CancelReservationRequest(token=token))
            except Exception:  # noqa: BLE001  (gone already: expired or never allocated)
                pass

    def _run_blocking(self, endpoint):
        t = time.monotonic()
        pending, self.pending = self.pending, None
        with open_link(endpoint, self.folder, self.name, pending=pending) as link:
            self.line["link_s"] = round(time.monotonic() - t, 3)
            self.line["device"] = link.device
            return run_on_link(self.nfcbench, self.args, link, timeout=self.timeout, on_output=self.on_output)

    async def run(self):
        start = time.monotonic()
        loop = asyncio.get_running_loop()
        place = self.place()
        expected_uid = (dict(place.tags).get("uid") if place else None) or None
        try:
            if wants_pending_bridge(self.session, place):
                self.pending = PendingBridge(self.folder, self.name)
            if not self.held:
                await self.reserve_and_wait()
                t = time.monotonic()
                await self.acquire()
                self.line["acquire_s"] = round(time.monotonic() - t, 3)
            endpoint = reader_endpoint(self.session, self.place())
            self.line["kind"] = endpoint.kind
            self.line["exporter"] = endpoint.host
            t = time.monotonic()
            self.result = await loop.run_in_executor(self.executor, self._run_blocking, endpoint)
            self.line["run_s"] = round(time.monotonic() - t, 3)
            await self.session.sync_with_coordinator()  # the place's state as of now
            self._judge(endpoint, expected_uid)
        except (MatrixError, LinkError) as e:
            self.line["pass"] = False
            self.line["error"] = str(e)
        except Exception as e:  # noqa: BLE001  (gRPC errors name the coordinator's reason)
            self.line["pass"] = False
            details = getattr(e, "details", None)
            self.line["error"] = details() if callable(details) else f"{type(e).__name__}: {e}"
        finally:
            if self.pending is not None:
                pending, self.pending = self.pending, None
                await loop.run_in_executor(self.executor, pending.cancel)
            t = time.monotonic()
            await self.release()
            if not self.held:
                self.line["release_s"] = round(time.monotonic() - t, 3)
        self.line["wall_s"] = round(time.monotonic() - start, 3)
        return self.line

    def _judge(self, endpoint, expected_uid):
        r = self.result
        self.line["exit"] = r.exit
        self.line.update(summarize(r.records))
        place = self.place()
        still_ours = place is not None and place.acquired == self.session.identity
        released = r.link_lost or not still_ours or (
            not r.ok and endpoint.kind == "pcsc" and not port_open(endpoint.host, endpoint.port))
        problems = []
        if released:
            holder = (place.acquired if place is not None else None) or "no one"
            if r.link_reason:
                why = r.link_reason
            elif endpoint.kind == "pcsc":
                why = f"the exporter closed its pcscd relay ({endpoint.host}:{endpoint.port} refuses connections)"
            else:
                why = "the exporter closed the reader's port"
            problems.append(f"the place was released while nfcbench used it (now held by {holder}): {why}; "
                            "the run proves nothing")
            self.line["released"] = True
        if r.timed_out:
            problems.append(f"nfcbench did not end within {self.timeout:g} s and was stopped")
        if r.exit != 0 and not released:
            problems.append(f"nfcbench exited {r.exit}")
        if expected_uid:
            # Checked whenever nfcbench reported a detection (session --json does; measure and
            # commands without --json report none, and the line says it was not checked).
            self.line["expected_uid"] = expected_uid
            got = (self.line.get("uid") or "").lower()
            self.line["uid_checked"] = bool(got)
            if got and got != expected_uid.lower():
                problems.append(f"UID {got} is not the place's uid tag {expected_uid}: another tag lies on the reader")
        if problems:
            self.line["pass"] = False
            self.line["error"] = "; ".join(problems)
            tail = (r.stderr.strip().splitlines() or [""])[-3:]
            self.line["stderr_tail"] = tail
        else:
            self.line["pass"] = True


async def run_matrix(address, tags, nfcbench, args, timeout=120.0, wait_timeout=300.0, out=None, log=None,
                     places=None):
    """Run the matrix; return (lines, summary). ``out(line_dict)`` is called as each reader
    finishes, ``log(text)`` for progress (held places)."""
    out = out or (lambda d: print(json.dumps(d), flush=True))
    log = log or (lambda s: print(f"nfcbench-lg: {s}", file=sys.stderr, flush=True))
    start = time.monotonic()
    session = await open_session(address)
    folder = tempfile.mkdtemp(prefix="nfcbench-lg.")
    lines = []
    try:
        names = places if places is not None else match_places(session, tags)
        executor = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(names)))
        try:
            runs = [PlaceRun(session, n, nfcbench, args, folder, executor, timeout, wait_timeout, log)
                    for n in names]

            async def one(run):
                line = await run.run()
                lines.append(line)
                out(line)

            await asyncio.gather(*(one(r) for r in runs))
        finally:
            executor.shutdown(wait=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        await close_session(session)
    passed = sum(1 for line in lines if line.get("pass"))
    summary = {
        "record": "summary",
        "tags": tags,
        "readers": len(lines),
        "passed": passed,
        "failed": len(lines) - passed,
        "wall_s": round(time.monotonic() - start, 3),
        "pass": bool(lines) and passed == len(lines),
    }
    if not lines:
        summary["error"] = "no place matches " + (" ".join(f"{k}={v}" for k, v in tags.items()) or "(no tags)")
    out(summary)
    return lines, summary


def parse_tags(pairs):
    tags = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"a tag filter is KEY=VALUE, not {pair!r}")
        tags[key] = value
    return tags


__all__ = ["run_matrix", "parse_tags", "match_places", "open_session", "close_session", "PlaceRun",
           "reader_endpoint", "MatrixError"]
