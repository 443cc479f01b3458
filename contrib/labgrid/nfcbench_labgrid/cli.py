"""``nfcbench-lg``: nfcbench on labgrid places.

    nfcbench-lg [-x HOST:PORT] -p PLACE -- session --first-read --json
    nfcbench-lg [-x HOST:PORT] matrix --tag reader=pn532 [--tag site=laba] -- session --first-read --timeout 10 --json

``-p PLACE``: run one nfcbench command on the place's reader. A place you hold already
(``labgrid-client -p PLACE acquire``) is used and stays yours; any other place is reserved
(waiting while someone else holds it), acquired, and released afterwards. nfcbench's output
passes through as it comes, and its exit status is the command's.

``matrix``: the same command on every place whose tags match, all at once; one JSON line
per reader (``"record": "reader"``) as each finishes, then one summary line
(``"record": "summary"``); exit 0 only when at least one reader ran and every reader passed.

``--device`` is set by nfcbench-lg (the bridged pty or the relayed pcscd's reader), so ARGS
must not give one. The coordinator is ``-x``, else ``$LG_COORDINATOR``, else 127.0.0.1:20408;
who you are to it is ``$LG_HOSTNAME``/``$LG_USERNAME``, else this host's name and your login
name (labgrid's rule: self-declared, not authenticated).

Exit status: nfcbench's (``-p``); 0 or 1 (``matrix``); 64 usage; 69 the coordinator, the place
or its reader cannot be had, or the place was released while nfcbench used it (the run then
proves nothing, and nfcbench-lg says so); 130 stopped by a signal while nothing ran.

Ctrl-C or SIGTERM while nfcbench runs is passed on to it (a session ends as with the user's
Done, 200), and the places are released when the runs end; a second one kills the runs. While
nothing runs (waiting for a place) it stops at once, releasing and cancelling what it holds.
"""

import argparse
import asyncio
import concurrent.futures
import os
import shutil
import sys
import tempfile

EXIT_USAGE = 64
EXIT_UNAVAILABLE = 69


def _split(argv):
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def _parser():
    p = argparse.ArgumentParser(prog="nfcbench-lg", description="nfcbench on labgrid places",
                                epilog="ARGS after -- are nfcbench's (without --device).")
    p.add_argument("-x", "--coordinator", default=os.environ.get("LG_COORDINATOR", "127.0.0.1:20408"),
                   metavar="HOST:PORT")
    p.add_argument("--nfcbench", default=None, metavar="PATH",
                   help="the nfcbench binary (default $NFCBENCH, else nfcbench on PATH)")
    p.add_argument("-p", "--place", help="run on this place")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="stop nfcbench after S seconds (default 120)")
    p.add_argument("--wait-timeout", type=float, default=300.0, metavar="S",
                   help="give up on a place held by someone else after S seconds (default 300)")
    p.add_argument("command", nargs="?", choices=["matrix"], help="matrix: every place matching --tag")
    p.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE",
                   help="matrix: places whose tags include KEY=VALUE (repeatable; name=PLACE works)")
    return p


def _nfcbench(path):
    from .driver import default_nfcbench

    return path or default_nfcbench()


async def _one(opts, args):
    from .matrix import MatrixError, PlaceRun, close_session, open_session

    session = await open_session(opts.coordinator)
    folder = tempfile.mkdtemp(prefix="nfcbench-lg.")
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        try:
            place = session.get_place(opts.place)
        except Exception as e:  # labgrid's UserError: no such place, or several match
            raise MatrixError(str(e)) from None
        held = place.acquired == session.identity

        def passthrough(stream, chunk):
            target = sys.stdout.buffer if stream == 1 else sys.stderr.buffer
            target.write(chunk)
            target.flush()

        def log(text):
            print(f"nfcbench-lg: {text}", file=sys.stderr, flush=True)

        run = PlaceRun(session, place.name, _nfcbench(opts.nfcbench), args, folder, executor, opts.timeout,
                       opts.wait_timeout, log, on_output=passthrough, held=held)
        line = await run.run()
    finally:
        executor.shutdown(wait=True)
        shutil.rmtree(folder, ignore_errors=True)
        await close_session(session)
    if line.get("released"):
        print(f"nfcbench-lg: {place.name}: {line['error']}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    if run.result is None:
        print(f"nfcbench-lg: {place.name}: {line.get('error', 'did not run')}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    if not line.get("pass") and line.get("error") and run.result.exit == 0:
        # nfcbench was content but the lab was not (the place's uid tag, a timeout): say so.
        print(f"nfcbench-lg: {place.name}: {line['error']}", file=sys.stderr)
        return 1
    return run.result.exit if run.result.exit >= 0 else 128 - run.result.exit


def _forward_signals():
    """Ctrl-C or SIGTERM: the running nfcbench processes get it (a session ends as with the
    user's Done), then the runs finish and the places are released as usual; a second one
    kills them."""
    import signal

    from .runner import forward_signal

    count = {"n": 0}

    def handler(signum, frame):
        count["n"] += 1
        sent = forward_signal(signal.SIGINT if count["n"] == 1 else signal.SIGKILL)
        if sent == 0:
            # Nothing running (waiting for a place, acquiring): stop; the places held and the
            # reservations made are released and cancelled as the tasks unwind.
            raise KeyboardInterrupt
        print(f"nfcbench-lg: {signal.Signals(signum).name}: passed to {sent} nfcbench run(s)"
              + ("; the places are released when they end" if count["n"] == 1 else ""), file=sys.stderr, flush=True)

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ours, args = _split(argv)
    parser = _parser()
    opts = parser.parse_args(ours)
    if any(a == "--device" or a.startswith("--device=") for a in args):
        print("nfcbench-lg: ARGS must not give --device: nfcbench-lg sets it to the place's reader", file=sys.stderr)
        return EXIT_USAGE
    if not args:
        parser.print_usage(sys.stderr)
        print("nfcbench-lg: give the nfcbench command after --", file=sys.stderr)
        return EXIT_USAGE
    _forward_signals()
    if opts.command == "matrix":
        from .matrix import parse_tags, run_matrix

        if opts.place:
            print("nfcbench-lg: matrix takes --tag filters, not -p (use --tag name=PLACE)", file=sys.stderr)
            return EXIT_USAGE
        try:
            tags = parse_tags(opts.tag)
        except ValueError as e:
            print(f"nfcbench-lg: {e}", file=sys.stderr)
            return EXIT_USAGE
        try:
            _, summary = asyncio.run(run_matrix(opts.coordinator, tags, _nfcbench(opts.nfcbench), args,
                                                timeout=opts.timeout, wait_timeout=opts.wait_timeout))
        except KeyboardInterrupt:
            print("nfcbench-lg: stopped", file=sys.stderr)
            return 130
        except Exception as e:  # noqa: BLE001  (the coordinator is unreachable)
            print(f"nfcbench-lg: {e}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        return 0 if summary["pass"] else 1
    if not opts.place:
        parser.print_usage(sys.stderr)
        print("nfcbench-lg: give -p PLACE or the matrix command", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(_one(opts, args))
    except KeyboardInterrupt:
        print("nfcbench-lg: stopped", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001
        details = getattr(e, "details", None)
        print(f"nfcbench-lg: {details() if callable(details) else e}", file=sys.stderr)
        return EXIT_UNAVAILABLE


if __name__ == "__main__":
    sys.exit(main())
