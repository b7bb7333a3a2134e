"""The circuit breaker's state machine, driven by a fake clock."""

from __future__ import annotations

import pytest

from chitta.embed.breaker import BreakerState, CircuitBreaker
from chitta.errors import CircuitOpen, EmbedBackendError


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Backend:
    """A callable that fails while ``failing`` is set and counts its calls."""

    def __init__(self) -> None:
        self.failing = False
        self.calls = 0

    def __call__(self, x: int) -> int:
        self.calls += 1
        if self.failing:
            raise EmbedBackendError("backend down: connection refused")
        return x * 2


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def breaker(clock: FakeClock) -> CircuitBreaker:
    return CircuitBreaker(clock=clock, name="test backend")


def fail(breaker: CircuitBreaker, backend: Backend, times: int) -> None:
    for _ in range(times):
        with pytest.raises(EmbedBackendError) as info:
            breaker.call(backend, 1)
        assert not isinstance(info.value, CircuitOpen)


def test_closed_passes_calls_and_results(breaker: CircuitBreaker) -> None:
    backend = Backend()
    assert breaker.call(backend, 21) == 42
    assert breaker.state is BreakerState.CLOSED
    assert breaker.stats()["successes"] == 1


def test_three_consecutive_failures_open_it(breaker: CircuitBreaker) -> None:
    backend = Backend()
    backend.failing = True
    fail(breaker, backend, 2)
    assert breaker.state is BreakerState.CLOSED
    fail(breaker, backend, 1)
    assert breaker.state is BreakerState.OPEN
    stats = breaker.stats()
    assert stats["consecutive_failures"] == 3
    assert stats["times_opened"] == 1
    assert stats["cooldown_remaining_s"] == 60.0


def test_success_resets_the_count(breaker: CircuitBreaker) -> None:
    backend = Backend()
    backend.failing = True
    fail(breaker, backend, 2)
    backend.failing = False
    breaker.call(backend, 1)
    backend.failing = True
    fail(breaker, backend, 2)
    assert breaker.state is BreakerState.CLOSED


def test_open_refuses_without_calling(breaker: CircuitBreaker, clock: FakeClock) -> None:
    backend = Backend()
    backend.failing = True
    fail(breaker, backend, 3)
    clock.now += 15
    with pytest.raises(CircuitOpen) as info:
        breaker.call(backend, 1)
    assert backend.calls == 3
    message = str(info.value)
    assert "45 s" in message
    assert "connection refused" in message
    assert "3 consecutive failures" in message
    assert breaker.stats()["refused"] == 1


def test_half_open_probe_success_closes(breaker: CircuitBreaker, clock: FakeClock) -> None:
    backend = Backend()
    backend.failing = True
    fail(breaker, backend, 3)
    clock.now += 60
    assert breaker.state is BreakerState.HALF_OPEN
    backend.failing = False
    assert breaker.call(backend, 5) == 10
    assert breaker.state is BreakerState.CLOSED
    assert breaker.stats()["consecutive_failures"] == 0
    # Closed again: it takes three new failures to open it.
    backend.failing = True
    fail(breaker, backend, 2)
    assert breaker.state is BreakerState.CLOSED


def test_half_open_probe_failure_reopens(breaker: CircuitBreaker, clock: FakeClock) -> None:
    backend = Backend()
    backend.failing = True
    fail(breaker, backend, 3)
    clock.now += 61
    fail(breaker, backend, 1)  # the probe: one failure is enough
    assert breaker.state is BreakerState.OPEN
    assert backend.calls == 4
    assert breaker.stats()["cooldown_remaining_s"] == 60.0  # a fresh cooldown
    assert breaker.stats()["times_opened"] == 2
    clock.now += 59
    with pytest.raises(CircuitOpen):
        breaker.call(backend, 1)
    assert backend.calls == 4


def test_only_one_probe_at_a_time(breaker: CircuitBreaker, clock: FakeClock) -> None:
    backend = Backend()
    backend.failing = True
    fail(breaker, backend, 3)
    clock.now += 60
    seen: list[str] = []

    def probe() -> str:
        # A second caller arriving while the probe runs is refused, not let through.
        with pytest.raises(CircuitOpen) as info:
            breaker.call(backend, 1)
        seen.append(str(info.value))
        return "ok"

    assert breaker.call(probe) == "ok"
    assert "probe" in seen[0]
    assert breaker.state is BreakerState.CLOSED


def test_interrupted_probe_lets_the_next_call_probe(
    breaker: CircuitBreaker, clock: FakeClock
) -> None:
    backend = Backend()
    backend.failing = True
    fail(breaker, backend, 3)
    clock.now += 60

    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        breaker.call(interrupted)
    backend.failing = False
    assert breaker.call(backend, 1) == 2
    assert breaker.state is BreakerState.CLOSED


def test_thresholds_are_arguments(clock: FakeClock) -> None:
    breaker = CircuitBreaker(failure_threshold=1, cooldown_s=5.0, clock=clock)
    backend = Backend()
    backend.failing = True
    fail(breaker, backend, 1)
    assert breaker.state is BreakerState.OPEN
    clock.now += 5
    assert breaker.state is BreakerState.HALF_OPEN


def test_bad_thresholds_are_refused() -> None:
    with pytest.raises(ValueError):
        CircuitBreaker(failure_threshold=0)
    with pytest.raises(ValueError):
        CircuitBreaker(cooldown_s=-1)
