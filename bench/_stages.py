"""Where the service's CPU goes, input kind by input kind and stage by stage (for
``bench/hall.py``).

:class:`StageMeter` wraps a few methods of the service's classes while it is installed and
charges the CPU time spent in each to a *stage* (each wrapped call reads the thread's CPU
clock; or, ``sampled``, a profiling timer samples the stage on top):

* ``driver``: the driver reading the board's bytes (parser, mirror, clock state:
  ``dgt.Board._on_data`` less what it calls in the service) and handing clock orders to it;
* ``recogniser``: :class:`service.recognize.Recognizer` (feed, tick, clock reports, new games);
* ``table``: the table and its arbiter (``Table.feed``/``tick``/``admin`` less the
  recogniser), the runner's glue and the hall's loop over its tables;
* ``store``: turning an input and its outputs into rows and queuing them (the hall's
  ``table_input``/``_log``/``_queue``), and the hall's side of a commit (``Hall._flush``
  less what follows);
* ``commit``: the store's transaction (``Store.commit``);
* ``stream``: the fan-out to the streams (``Hall._publish``: the hub building each
  update's JSON) and writing them (``StreamResponse.write``).

Time spent inside a stage's call is the innermost stage's, so nothing counts twice (a call
of the stage already charged reads no clock).  Each
*input* (what the hall logs: a board event, a tick that produced something, an admin
command) has a kind: ``clock`` (a clock report), ``square`` (a square changed), ``lever``,
``board`` (other board events: snapshots, the clock's link), ``tick``, ``admin``.  The stage
time of an input's own call is its kind's; the driver's time for a read is shared by the
kinds of the events it gave (``none`` when it gave none: a clock acknowledgement, a piece
put back where it stood); the commit and the fan-out serve many inputs at once and are
shared by row (store, commit, driver) and by published update (stream).  Ticks that produced
nothing are charged to ``tick`` (it counts only those that did).

The service itself carries no instrumentation: nothing of this runs unless a bench
installs it, and :meth:`StageMeter.uninstall` puts the methods back.  Under the compiled
build (``build_compiled.py``) a compiled class (the recogniser) still takes a wrapper, which
sees the calls from plain Python (the table's) and not a compiled caller's: the split holds
while the stage entry points are called from plain code.  A class that refuses a wrapper
is left as it is, its time in the stage that calls it, and :func:`report` says so
(:attr:`StageMeter.unwrapped`)."""

from __future__ import annotations

import collections
import functools
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from dgt.events import ClockUpdate, LeverMoved, SquareChanged

STAGES = ("driver", "recogniser", "table", "store", "commit", "stream")
KINDS = ("clock", "square", "lever", "board", "tick", "admin", "none")

SAMPLE_INTERVAL = 0.0005
"""Seconds of the process's CPU time between two samples of a sampled meter, as asked of the
kernel (which counts in ticks: a few milliseconds apart in practice)."""

_DRIVER = "_driver"
"""The pseudo-kind of a read while the board's bytes are parsed (shared out per read)."""
_BATCH = "_batch"
"""The pseudo-kind of the commit and the fan-out (shared out at the end)."""

_process_ns = time.process_time_ns
_now = time.thread_time_ns
"""The thread's CPU time: a system call of ~0.7 us, where ``perf_counter_ns`` takes 60 ns,
but a stage the system preempts (the machine shared with other work) does not count the
wait: wall time in stages was up to 2.7 times their CPU time on a loaded machine."""


def event_kind(event: Any) -> str:
    """The input kind of a board event."""
    if isinstance(event, ClockUpdate):
        return "clock"
    if isinstance(event, SquareChanged):
        return "square"
    if isinstance(event, LeverMoved):
        return "lever"
    return "board"


class StageMeter:
    """CPU time by (input kind, stage) while installed (see the module docstring).

    By default every wrapped call reads the thread's CPU clock as it enters and leaves
    (exact, but ~2 us a call: at 2,000 tables the service's figure with the meter was up to a
    quarter above the bare one).  ``sampled``: the wrappers only keep the stack of stages
    (no clock read), and a profiling timer (``SIGPROF``, :data:`SAMPLE_INTERVAL`) charges the
    process's CPU time since the last sample to the stage on top: cheaper, but time spent
    in C code outside any stage (the event loop's) goes to the Python code that runs next,
    and a 20 s window holds only a few thousand samples."""

    def __init__(self, *, sampled: bool = False) -> None:
        self.ns: collections.Counter[tuple[str, str]] = collections.Counter()
        self.inputs: collections.Counter[str] = collections.Counter()
        """Inputs logged, by kind."""
        self.published: collections.Counter[str] = collections.Counter()
        """Inputs whose outputs were queued for publishing, by kind."""
        self.calls = 0
        """Wrapped calls that entered a stage (each costs :meth:`overhead_ns`)."""
        self.samples = 0
        """Profiling timer samples taken while :attr:`on` (sampled meters)."""
        self.on = False
        """Whether time and inputs are being counted (the window); the wrappers stay."""
        self.sampled = sampled
        self._stack: list[tuple[str, str]] = []
        self._mark = 0
        self._sampled_at = _process_ns()
        self._emitted: list[str] | None = None
        self._undo: list[Callable[[], None]] = []
        self.unwrapped: list[str] = []
        """Methods left as they are: their class refused the wrapper (a compiled class may)."""

    # --- charging ---------------------------------------------------------------------

    def enter(self, kind: str | None, stage: str) -> None:
        stack = self._stack
        if self.sampled:
            stack.append((kind or (stack[-1][0] if stack else "none"), stage))
            self.calls += 1
            return
        now = _now()
        if stack:
            top = stack[-1]
            if self.on:
                self.ns[top] += now - self._mark
            if kind is None:
                kind = top[0]
        stack.append((kind or "none", stage))
        self._mark = now
        self.calls += 1

    def leave(self) -> None:
        if self.sampled:
            self._stack.pop()
            return
        now = _now()
        top = self._stack.pop()
        if self.on:
            self.ns[top] += now - self._mark
        self._mark = now

    def sample(self, *_: object) -> None:
        """The profiling timer expired: the process's CPU time since the last sample goes
        to the stage on top (none: no stage).  (The kernel accounts CPU time in ticks, so
        samples come every few milliseconds rather than every interval asked for.)"""
        now = _process_ns()
        spent, self._sampled_at = now - self._sampled_at, now
        if self.on:
            self.samples += 1
            if self._stack:
                self.ns[self._stack[-1]] += spent

    def _start_sampling(self) -> None:
        previous = signal.signal(signal.SIGPROF, self.sample)
        signal.setitimer(signal.ITIMER_PROF, SAMPLE_INTERVAL, SAMPLE_INTERVAL)

        def stop() -> None:
            signal.setitimer(signal.ITIMER_PROF, 0.0, 0.0)
            signal.signal(signal.SIGPROF, previous)

        self._undo.append(stop)

    def reset(self) -> None:
        self.ns.clear()
        self.inputs.clear()
        self.published.clear()
        self.calls = 0
        self.samples = 0
        self._sampled_at = _process_ns()

    # --- wrapping ---------------------------------------------------------------------

    def _patch(self, owner: Any, name: str, wrapped: Callable[..., Any]) -> None:
        original = owner.__dict__[name]
        try:
            setattr(owner, name, wrapped)
        except (TypeError, AttributeError):  # a compiled class: its methods cannot be replaced
            self.unwrapped.append(f"{owner.__name__}.{name}")
            return
        self._undo.append(lambda: setattr(owner, name, original))

    def _timed(
        self, owner: Any, name: str, stage: str, kind: str | None = None
    ) -> Callable[..., Any]:
        fn = owner.__dict__[name]
        meter = self

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            stack = meter._stack
            if stack and stack[-1][1] == stage and (kind is None or stack[-1][0] == kind):
                return fn(*args, **kwargs)  # charged to the same already: no clock to read
            meter.enter(kind, stage)
            try:
                return fn(*args, **kwargs)
            finally:
                meter.leave()

        self._patch(owner, name, timed)
        return fn

    def _counted(self, log: Callable[..., None]) -> Callable[..., None]:
        """``log`` (the hall's, logging one input) counting the input by its kind, charged
        to the store."""
        meter = self

        @functools.wraps(log)
        def logged(hall: Any, table: Any, *args: Any) -> None:
            if meter.on:
                meter.inputs[meter._stack[-1][0] if meter._stack else "none"] += 1
            if meter._stack and meter._stack[-1][1] == "store":
                log(hall, table, *args)
                return
            meter.enter(None, "store")
            try:
                log(hall, table, *args)
            finally:
                meter.leave()

        return logged

    def timed_async(
        self, fn: Callable[..., Awaitable[Any]], kind: str | None, stage: str
    ) -> Callable[..., Awaitable[Any]]:
        """An async callable whose every step is charged to ``(kind, stage)``."""
        meter = self

        @functools.wraps(fn)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            return await _Charged(fn(*args, **kwargs), meter, kind, stage)

        return timed

    def install(self) -> None:
        """Wrap the service's stage methods."""
        from aiohttp import web

        from dgt.board import Board
        from service.hall import Hall
        from service.recognize import Recognizer
        from service.store import Store
        from service.table import RealtimeTable, Table
        from service.table_runner import TableRunner

        meter = self

        on_data = Board.__dict__["_on_data"]

        @functools.wraps(on_data)
        def read(board: Any, data: bytes) -> None:
            outer = meter._emitted
            meter._emitted = emitted = []
            before = meter.ns[(_DRIVER, "driver")]
            meter.enter(_DRIVER, "driver")
            try:
                on_data(board, data)
            finally:
                meter.leave()
                meter._emitted = outer
                spent = meter.ns[(_DRIVER, "driver")] - before
                if meter.on and spent:
                    meter.ns[(_DRIVER, "driver")] -= spent
                    kinds = emitted or ["none"]
                    for kind in kinds:
                        meter.ns[(kind, "driver")] += spent // len(kinds)

        self._patch(Board, "_on_data", read)

        board_event = TableRunner.__dict__["board_event"]

        @functools.wraps(board_event)
        def runner_event(runner: Any, event: Any) -> None:
            kind = event_kind(event)
            if meter._emitted is not None:
                meter._emitted.append(kind)
            meter.enter(kind, "table")
            try:
                board_event(runner, event)
            finally:
                meter.leave()

        self._patch(TableRunner, "board_event", runner_event)

        for cls in (Table, RealtimeTable):
            for name in ("feed", "tick", "admin"):
                self._timed(cls, name, "table")
        for name in ("feed", "tick", "clock_report", "start_game"):
            self._timed(Recognizer, name, "recogniser")
        for name in ("table_input", "_queue", "clock_echo"):
            self._timed(Hall, name, "store")
        self._timed(Hall, "tick", "table", "tick")
        self._timed(Hall, "_flush", "store", _BATCH)
        self._timed(Store, "commit", "commit")
        self._timed(Hall, "_publish", "stream", _BATCH)
        self._timed(TableRunner, "send_clock_orders", "driver")

        for name in ("_log", "_log_clock"):  # each logs one input: counted by kind
            self._patch(Hall, name, self._counted(Hall.__dict__[name]))

        queue = Hall.__dict__["_queue"]  # already timed above

        @functools.wraps(queue)
        def queued(hall: Any, runner: Any, outs: Any, source: Any, *, publish: bool = True) -> None:
            if meter.on and outs and publish:
                meter.published[meter._stack[-1][0] if meter._stack else "none"] += 1
            queue(hall, runner, outs, source, publish=publish)

        self._patch(Hall, "_queue", queued)

        write = web.StreamResponse.__dict__["write"]
        self._patch(web.StreamResponse, "write", self.timed_async(write, _BATCH, "stream"))
        if self.sampled:
            self._start_sampling()

    def admin(self, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        """The hall's ``admin`` (bound), charged to the admin kind."""
        return self.timed_async(fn, "admin", "table")

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    # --- figures ----------------------------------------------------------------------

    def split(self) -> dict[str, dict[str, float]]:
        """CPU ns by kind and stage, the commit and fan-out shared out (see the module
        docstring)."""
        table: dict[str, dict[str, float]] = {k: dict.fromkeys(STAGES, 0.0) for k in KINDS}
        rows = sum(self.inputs.values())
        shown = sum(self.published.values())
        for (kind, stage), ns in self.ns.items():
            if kind == _BATCH:
                weights = self.published if stage == "stream" and shown else self.inputs
                total = shown if stage == "stream" and shown else rows
                for k, n in weights.items():
                    table.setdefault(k, dict.fromkeys(STAGES, 0.0))[stage] += ns * n / max(total, 1)
                if not total:
                    table["none"][stage] += ns
            else:
                table.setdefault(kind, dict.fromkeys(STAGES, 0.0))[stage] += ns
        return table

    @staticmethod
    def overhead_ns(samples: int = 20000, *, sampled: bool = False) -> float:
        """CPU ns one wrapped call costs (a wrapper with an enter and a leave)."""
        meter = StageMeter(sampled=sampled)
        meter.on = True

        class Probe:
            def call(self) -> None:
                pass

        plain = Probe()
        t0 = _now()
        for _ in range(samples):
            plain.call()
        bare = _now() - t0
        meter._timed(Probe, "call", "table", "tick")
        t0 = _now()
        for _ in range(samples):
            plain.call()
        timed = _now() - t0
        meter.uninstall()
        return max(0.0, (timed - bare) / samples)


class _Charged(Coroutine[Any, Any, Any]):
    """A coroutine whose steps run inside a stage of a meter."""

    def __init__(
        self, coro: Coroutine[Any, Any, Any], meter: StageMeter, kind: str | None, stage: str
    ) -> None:
        self._coro = coro
        self._meter = meter
        self._kind = kind
        self._stage = stage

    def send(self, value: Any) -> Any:
        self._meter.enter(self._kind, self._stage)
        try:
            return self._coro.send(value)
        finally:
            self._meter.leave()

    def throw(self, *args: Any) -> Any:
        self._meter.enter(self._kind, self._stage)
        try:
            return self._coro.throw(*args)
        finally:
            self._meter.leave()

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Any:
        return self

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        return self.send(None)


def report(meter: StageMeter, service_ns: float, inputs: int, overhead: float) -> list[str]:
    """The lines ``bench/hall.py`` prints: per kind, CPU per input and its split by stage;
    the CPU no stage holds (event loop, web server, collector) per input."""
    split = meter.split()
    lines = [
        "  per input kind: us per input = driver + recogniser + table + store + commit + stream"
    ]
    if meter.unwrapped:
        classes = ", ".join(dict.fromkeys(name.split(".")[0] for name in meter.unwrapped))
        lines.append(
            f"  note: the methods of {classes} took no wrapper (compiled): their time is in "
            "the stage that calls them"
        )
    staged = 0.0
    total_inputs = max(inputs, 1)
    for kind in KINDS:
        stages = split.get(kind, {})
        ns = sum(stages.values())
        staged += ns
        n = meter.inputs.get(kind, 0)
        if not ns and not n:
            continue
        per = n if n else total_inputs
        parts = " + ".join(f"{stages.get(s, 0.0) / per / 1000:.1f}" for s in STAGES)
        label = f"{kind} ({n:,} inputs)" if n else f"{kind} (no inputs; per input of all)"
        lines.append(f"  {label}: {ns / per / 1000:.1f} us = {parts}")
    by_stage = " + ".join(
        f"{s} {sum(split[k][s] for k in split) / total_inputs / 1000:.1f}" for s in STAGES
    )
    lines.append(f"  all inputs by stage (us per input): {by_stage}")
    rest = service_ns - staged
    lines.append(
        f"  staged {staged / total_inputs / 1000:.1f} us per input; not in a stage (event loop, "
        f"web server, collector, timing itself ~{meter.calls * overhead / total_inputs / 1000:.1f}"
        f"): {rest / total_inputs / 1000:.1f} us per input"
    )
    return lines
