"""Real-time admission (``flashlab admit``) as typed results: the verdict of a periodic task set
under PaRT-FTL, WAO-GC or RTGC on a device, every test with its terms, and the scheme's
guaranteed bounds (part-ftl.txt eqs. 6-16). See docs/realtime-analysis.md."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Term:
    """A named utilisation of a test (``read``, ``write``, ``encoding``, ``GC``, ``blocking``)."""

    name: str
    value: float


@dataclass(frozen=True)
class RequestCheck:
    """A request's worst response against its deadline (WAO-GC's section VI.A test)."""

    task: int
    request: str
    response_ns: float
    deadline_ns: float
    partial_steps: int


@dataclass(frozen=True)
class AdmissionTest:
    """One test: a utilisation sum (``terms``) or every request's worst response
    (``requests``); it holds when ``total <= limit``."""

    name: str
    source: str
    terms: list[Term]
    total: float
    limit: float
    passes: bool
    requests: list[RequestCheck]


@dataclass(frozen=True)
class Bound:
    """A guaranteed figure: ``value`` in ``unit`` (``ns``, ``MiB/s`` or ``fraction``)."""

    name: str
    equation: str
    value: float
    unit: str


@dataclass(frozen=True)
class Admission:
    """The verdict of :func:`flashlab.admit`.

    Attributes:
        scheme: ``"PaRT-FTL"``, ``"WAO-GC"`` or ``"RTGC"``.
        admitted: Whether every test holds.
        refusal: The failing test's message (what ``run.admission = "enforce"`` says), or
            ``None``.
        tests: Every test, failing or not.
        bounds: The scheme's latencies and bandwidths on this device.
        notes: What the paper says that these numbers contradict, and caveats.
        device: The analysis device (Table II's symbols: ``read_ns`` is t_r, ``chips`` |F|...).
        device_source: Where its times come from (a preset's measured table or the model).
        tasks: The tasks as the analysis sees them (pages and periods).
    """

    scheme: str
    admitted: bool
    refusal: str | None
    tests: list[AdmissionTest]
    bounds: list[Bound]
    notes: list[str]
    device: dict[str, Any]
    device_source: str
    tasks: list[dict[str, Any]]

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Admission:
        """Builds the result from the JSON document of ``flashlab admit --json``."""
        tests = [
            AdmissionTest(
                name=t["name"],
                source=t["source"],
                terms=[Term(**term) for term in t["terms"]],
                total=t["total"],
                limit=t["limit"],
                passes=t["passes"],
                requests=[RequestCheck(**r) for r in t["requests"]],
            )
            for t in doc["tests"]
        ]
        return cls(
            scheme=doc["scheme"],
            admitted=doc["admitted"],
            refusal=doc["refusal"],
            tests=tests,
            bounds=[Bound(**b) for b in doc["bounds"]],
            notes=list(doc["notes"]),
            device=dict(doc["device"]),
            device_source=doc["device_source"],
            tasks=list(doc["tasks"]),
        )

    def test(self, source: str) -> AdmissionTest:
        """The test from ``source`` (``"eq. 6"``, ``"eq. 7"``, ``"RTGC"``, ``"section VI.A"``)."""
        for t in self.tests:
            if t.source == source:
                return t
        known = ", ".join(t.source for t in self.tests)
        raise KeyError(f"{self.scheme} has no test {source!r} (its tests: {known})")

    def bound(self, equation: str) -> Bound:
        """The bound of ``equation`` (``"eq. 8"`` ... ``"eq. 16"``)."""
        for b in self.bounds:
            if b.equation == equation:
                return b
        known = ", ".join(b.equation for b in self.bounds) or "none"
        raise KeyError(f"{self.scheme} has no bound {equation!r} (its bounds: {known})")
