"""The clock keeper alone, with explicit times: time kept without a clock (running side,
increments, the next period's time, flag fall), the lever side learned from the first press,
a clock's reports and flags, and the orders for a DGT 3000 (times, texts, back to the
times)."""

from __future__ import annotations

from dgt.events import ClockUpdate, Side
from service.table import ClockKeeper, ClockOrder
from service.table.clock_keeper import TEXT_SECONDS, result_text
from service.time_control import TimeControl

WHITE, BLACK = True, False


def keeper(control: str = "60+2", *, clock: bool = False) -> ClockKeeper:
    kept = ClockKeeper(TimeControl.parse(control))
    kept.present = clock
    return kept


def test_without_a_clock_white_runs_from_the_start_and_the_move_passes_the_turn() -> None:
    k = keeper()
    k.begin(100.0)
    assert k.keeps_time
    assert k.snapshot(110.0) == {"white": 50.0, "black": 60.0, "running": "white", "as_of": 110.0}
    assert k.moved(WHITE, {BLACK}, 110.0) == 50.0  # the time shown with the move
    k.completed(WHITE, 1, 110.0)  # the increment of 2 s
    assert k.remaining(WHITE, 120.0) == 52.0
    assert k.remaining(BLACK, 120.0) == 50.0
    assert k.take_orders() == []  # no clock: no orders


def test_a_part_of_several_actions_keeps_the_side_running() -> None:
    k = keeper("60+0")
    k.begin(0.0)
    k.moved(WHITE, {WHITE}, 5.0)  # 20-chess: White acts again
    assert k.clocks.running == WHITE
    k.moved(WHITE, {BLACK}, 7.0)
    assert k.clocks.running == BLACK


def test_the_next_period_is_added_after_its_last_move() -> None:
    k = keeper("2/60:30")
    k.begin(0.0)
    k.completed(WHITE, 1, 1.0)
    assert k.remaining(WHITE, 1.0) == 59.0
    k.completed(WHITE, 2, 2.0)
    assert k.remaining(WHITE, 2.0) == 88.0


def test_the_flag_falls_only_without_a_clock_and_only_when_the_time_is_out() -> None:
    k = keeper("60+0")
    k.begin(0.0)
    assert k.flag_fallen(59.9) is None
    assert k.flag_fallen(60.0) == WHITE
    assert k.remaining(WHITE, 60.0) == 0.0
    with_clock = keeper("60+0", clock=True)
    with_clock.begin(0.0)
    assert with_clock.flag_fallen(100.0) is None


def test_untimed_games_keep_no_time() -> None:
    k = keeper("-")
    k.begin(0.0)
    assert not k.keeps_time
    assert k.moved(WHITE, {BLACK}, 3.0) is None
    assert k.snapshot(3.0)["running"] is None


def test_a_clock_is_set_at_the_start_with_whites_side_where_the_lever_is_up() -> None:
    k = keeper("300+0", clock=True)
    k.seen(ClockUpdate(0.0, 300, 300, False, Side.RIGHT))
    k.begin(1.0)
    assert k.white_side is Side.RIGHT
    assert k.take_orders() == [ClockOrder("set_and_run", 300.0, 300.0, Side.RIGHT)]


def test_the_lever_side_is_learned_from_the_first_press_that_completes_a_move() -> None:
    k = keeper("300+0")
    k.begin(0.0)
    assert k.lever(Side.LEFT, [], record_empty=False) is None  # nothing to tell from
    assert k.white_side is None
    assert k.present  # a lever means a clock
    assert k.lever(Side.LEFT, [WHITE], record_empty=False) == WHITE  # White pressed: left up
    assert k.white_side is Side.RIGHT
    assert k.lever(Side.RIGHT, [], record_empty=False) == BLACK


def test_a_press_before_any_move_starts_whites_clock() -> None:
    k = keeper("300+0")
    assert k.lever(Side.LEFT, [], record_empty=True) is None  # Black starts White's clock
    assert k.white_side is Side.LEFT


def test_a_press_runs_the_other_side_and_adds_the_increment_to_the_clock() -> None:
    k = keeper("300+5", clock=True)
    k.white_side = Side.LEFT
    k.begin(0.0)
    k.take_orders()
    shown = k.pressed(WHITE, completed=True, part_done=True, moves=1, t=10.0)
    assert shown == 290.0  # the time recorded with the move, before its increment
    assert k.remaining(WHITE, 10.0) == 295.0
    assert k.clocks.running == BLACK
    assert k.take_orders() == [ClockOrder("set_and_run", 295.0, 300.0, Side.RIGHT)]


def test_a_clocks_report_sets_the_times_and_its_flags_are_read() -> None:
    k = keeper("300+0", clock=True)
    k.white_side = Side.RIGHT
    report = ClockUpdate(50.0, 12.0, 0.0, True, Side.LEFT, right_flag=True)
    assert k.read(report, check_flags=False) == []
    assert (k.clocks.white, k.clocks.black, k.clocks.as_of) == (0.0, 12.0, 50.0)
    assert k.clocks.running == BLACK  # the left lever is up: Black's side runs
    assert k.read(report, check_flags=True) == [WHITE]


def test_the_first_report_before_a_move_sets_the_clock_to_the_time_control() -> None:
    k = keeper("180+2", clock=True)
    k.seen(ClockUpdate(5.0, 10.0, 10.0, False, Side.LEFT))
    assert k.first_report(5.0, had_clock=False)
    assert k.white_side is Side.LEFT
    assert k.take_orders() == [ClockOrder("set_and_run", 180.0, 180.0, Side.LEFT)]
    assert not k.first_report(6.0, had_clock=True)


def test_a_text_shows_for_its_time_and_the_times_come_back() -> None:
    k = keeper(clock=True)
    k.text("TOUCH-MOVE", 0.5, 10.0)
    k.tick(10.0 + TEXT_SECONDS - 0.1)
    assert k.take_orders() == [ClockOrder("text", text="TOUCH-MO", beep=0.5)]
    k.tick(10.0 + TEXT_SECONDS)
    assert k.take_orders() == [ClockOrder("end_text")]
    k.stopped("1/2-1/2", 20.0)  # held until the next order
    k.tick(100.0)
    orders = k.take_orders()
    assert [o.kind for o in orders] == ["set_and_run", "text"]  # settings go first
    assert orders[0].run is None  # paused
    assert orders[1].text == result_text("1/2-1/2") == "DRAW"


def test_a_penalty_adds_time_and_says_so() -> None:
    k = keeper("300+0", clock=True)
    k.white_side = Side.LEFT
    k.begin(0.0)
    k.take_orders()
    k.add_time({BLACK: 120.0}, 10.0)
    orders = k.take_orders()
    assert orders[0] == ClockOrder("set_and_run", 290.0, 420.0, Side.LEFT)
    assert orders[1].text == "+2 MIN"


def test_round_ms_is_round_to_three_places() -> None:
    import math
    import random

    from service.table.clock_keeper import round_ms

    rng = random.Random(20)
    values: list[float] = [0.0, -0.0, 0.0004, -0.0004, 0.0005, 0.0015, 2.675, 1e9, -1e9, 1e12,
                           math.inf, -math.inf, 5e-324, 299.9995, 0.1 + 0.2]  # fmt: skip
    values += [rng.uniform(0.0, 10_800.0) for _ in range(100_000)]
    values += [rng.uniform(-1e6, 1e6) for _ in range(50_000)]
    values += [rng.randrange(0, 10**7) / 1000 + rng.choice((-1, 1)) * 5e-4 for _ in range(50_000)]
    values += [rng.randrange(0, 10**9) / 10**6 for _ in range(50_000)]
    for value in values:
        got, want = round_ms(value), round(value, 3)
        assert got == want, value
        assert math.copysign(1, got) == math.copysign(1, want), value
    assert math.isnan(round_ms(math.nan))
    assert round_ms(300) == 300
    assert type(round_ms(300)) is int  # as round: an int stays one


def test_the_shown_clocks_are_the_snapshot_whichever_side_runs_or_stands() -> None:
    """``shown`` keeps a standing side's rounded time from the snapshot before; whatever
    came before (the same side running, the other, none; times as ints or floats, given
    anew at the same value or changed), it reads as the snapshot taken anew, an int an
    int."""
    import random

    import orjson

    rng = random.Random(20)
    k = keeper()
    clocks = k.clocks
    t = 1000.0
    for _ in range(3000):
        step = rng.random()
        if step < 0.3:  # a report: both times given anew, the standing one at its value
            clocks.white = float(clocks.white) if rng.random() < 0.7 else clocks.white
            clocks.black = float(clocks.black) if rng.random() < 0.7 else clocks.black
            if clocks.running is WHITE:
                clocks.white = clocks.white - rng.choice((0.0, 0.25, 1.0001))
            elif clocks.running is BLACK:
                clocks.black = clocks.black - rng.choice((0.0, 0.25, 1.0001))
        elif step < 0.45:  # a press, a stop, a start
            clocks.running = rng.choice((WHITE, BLACK, None))
        elif step < 0.55:  # a time set (an int stays an int)
            value = rng.choice((300, 299.5, 0, -1.5, 12.0004999))
            if rng.random() < 0.5:
                clocks.white = value
            else:
                clocks.black = value
        if rng.random() < 0.5:
            t += rng.choice((0.0, 0.5, 1.0))
            clocks.as_of = t
        now = clocks.as_of if rng.random() < 0.7 else clocks.as_of + rng.random()
        assert orjson.dumps(k.shown(now)) == orjson.dumps(clocks.snapshot(now))
