"""Predict, then reveal: questions about what a running cluster does next, checked against the
run itself.

A learner looks at the cluster (timers running down, requests in flight), commits to an answer,
and only then sees what happened. The truth comes from the run: `Recording.lookahead` plays the
branch forward on a copy (the live cluster does not move), and each question reads its answer
from the trace events of that future. Answers are judged with the lessons' `Feedback`, the same
check vocabulary as the notebooks' exercise cells.

Questions (each knows when it makes sense, see `questions_for`):

* `WhenExpelled(consumer)`: at what virtual time does the coordinator remove the member for a
  missed session (`GroupMetadataManager`'s `heartbeat-<group>-<member>` timer expiring:
  "Member ... has failed, removing it from the group")? Or "never" within the horizon.
* `NextLeader(group)`: which consumer leads the next generation (the one whose JoinGroup the
  coordinator answers as leader: it runs the assignor, "Finished assignment for group at
  generation N")?
* `NextGeneration(group)`: which generation does the group stabilize in next ("Stabilized group
  ... generation N")?
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .feedback import Feedback
from .logs.layout import DEFAULT_START, format_log4j
from .trace import TraceEvent

if TYPE_CHECKING:
    from .cluster import Cluster
    from .recording import Recording

__all__ = ["Question", "WhenExpelled", "NextLeader", "NextGeneration", "questions_for",
           "reveal", "HORIZON_MS"]

HORIZON_MS = 600_000  # how far ahead a question looks (10 virtual minutes)
_NEVER = ("never", "no", "none", "not", "not expelled", "-")


def _clock(ms: int) -> str:
    """Virtual ms and the log's wall-clock form, e.g. "63,103 ms (09:01:03,103)"."""
    stamp = format_log4j(ms, "INFO", "", "x", DEFAULT_START)[1:24]
    return f"{ms:,} ms ({stamp[11:]})"


def _ms(answer: Any) -> int | None:
    """A time answer: an int, or text such as "63,103", "63103 ms"; None when it says never."""
    if isinstance(answer, bool):
        raise ValueError("a time, in virtual ms")
    if isinstance(answer, int):
        return answer
    if answer is None:
        return None
    text = str(answer).strip().lower()
    if text in _NEVER:
        return None
    digits = re.fullmatch(r"([\d_,\s]+)\s*(ms)?", text)
    if digits is None:
        raise ValueError(f"{answer!r} is not a time in virtual ms (write e.g. 75000) or 'never'")
    return int(re.sub(r"[_,\s]", "", digits.group(1)))


@dataclass(frozen=True)
class Question(ABC):
    """One question about the cluster's next moves. Subclasses say how to read the truth from
    the future's trace events and how to judge an answer (an abstract base: only its
    subclasses are asked)."""

    key: str
    text: str
    form: str  # what an answer looks like, shown under the question

    @abstractmethod
    def truth(self, future: Sequence[TraceEvent], cluster: Cluster) -> Any:
        """What really happens, read from the trace events of the future."""

    @abstractmethod
    def judge(self, answer: Any, truth: Any, cluster: Cluster) -> Feedback:
        """The learner's answer against `truth`."""


@dataclass(frozen=True)
class WhenExpelled(Question):
    consumer: str = ""
    member_id: str = ""

    @classmethod
    def of(cls, cluster: Cluster, consumer: str) -> WhenExpelled:
        member = cluster.consumer(consumer).member_id
        return cls(f"expel:{consumer}",
                   f"When does the coordinator remove {consumer} from its group for a missed "
                   f"session (session.timeout.ms)?",
                   "the virtual time in ms (the panel's clock, e.g. 75000), or never", consumer,
                   member)

    def truth(self, future: Sequence[TraceEvent], cluster: Cluster) -> TraceEvent | None:
        return next((e for e in future if e.kind == "member_session_expired"
                     and e.fields.get("member") == self.member_id), None)

    def judge(self, answer: Any, truth: TraceEvent | None, cluster: Cluster) -> Feedback:
        name = f"When is {self.consumer} removed?"
        try:
            guess = _ms(answer)
        except ValueError as exc:
            return Feedback(name, "unanswered", f"Answer with {exc}.")
        if truth is None:
            if guess is None:
                return Feedback(name, "correct", f"It is never removed within the next "
                                f"{HORIZON_MS // 60_000} minutes: something keeps its session "
                                f"alive (heartbeats, or offset commits, which a classic group's "
                                f"coordinator also counts).")
            return Feedback(name, "wrong", f"It is not removed within the next "
                            f"{HORIZON_MS // 60_000} minutes: look at what still reaches the "
                            f"coordinator and re-arms the session timer.")
        at = truth.ts
        if guess is None:
            return Feedback(name, "wrong", f"It is removed at {_clock(at)}: its session timer ran "
                            "out. Look at the session bar on the coordinator's side.")
        off = guess - at
        if abs(off) <= 10:
            return Feedback(name, "correct", f"The coordinator removed it at {_clock(at)} "
                            "(\"has failed, removing it from the group\"): the last request "
                            "that re-armed its session timer, plus session.timeout.ms.")
        return Feedback(name, "wrong", f"It was removed at {_clock(at)}, {abs(off):,} ms "
                        f"{'before' if off > 0 else 'after'} your answer. The coordinator's "
                        "timer starts at the last heartbeat (or commit) that REACHED it, not "
                        "at the last one sent.")


@dataclass(frozen=True)
class NextLeader(Question):
    group: str = "group-1"

    @classmethod
    def of(cls, cluster: Cluster, group: str = "group-1") -> NextLeader:
        return cls(f"leader:{group}", f"Which consumer leads the next generation of {group} "
                   "(runs the assignor for everyone)?",
                   "a consumer's name, e.g. consumer-2", group)

    def truth(self, future: Sequence[TraceEvent], cluster: Cluster) -> TraceEvent | None:
        for e in future:
            if e.kind == "assignment_computed" and e.source.startswith("client-"):
                client = e.source[len("client-"):]
                consumer = cluster.consumers.get(client)
                if consumer is not None and consumer.config.group_id == self.group:
                    return e
        return None

    def judge(self, answer: Any, truth: TraceEvent | None, cluster: Cluster) -> Feedback:
        name = f"Who leads the next generation of {self.group}?"
        if answer is None or not str(answer).strip():
            return Feedback(name, "unanswered", "Answer with a consumer's name.")
        given = str(answer).strip()
        if truth is None:
            return Feedback(name, "wrong" if given.lower() not in _NEVER else "correct",
                            f"No new generation of {self.group} starts in the next "
                            f"{HORIZON_MS // 60_000} minutes.")
        leader = truth.source[len("client-"):]
        gen = truth.fields.get("generation")
        if given == leader:
            return Feedback(name, "correct", f"{leader} leads generation {gen}. The first "
                            "member to join an empty group becomes leader and stays leader as "
                            "long as it rejoins; when it does not, the coordinator picks one of "
                            "the members that did (ClassicGroup.maybeElectNewJoinedLeader).")
        return Feedback(name, "wrong", f"{leader} leads generation {gen} (at "
                        f"{_clock(truth.ts)}). The leader keeps its role while it rejoins; only "
                        "when it does not does the coordinator pick another member that "
                        "rejoined. Partition counts and names play no part.")


@dataclass(frozen=True)
class NextGeneration(Question):
    group: str = "group-1"

    @classmethod
    def of(cls, cluster: Cluster, group: str = "group-1") -> NextGeneration:
        return cls(f"generation:{group}", f"In which generation is {group} next Stabilized?",
                   "a generation number, e.g. 3", group)

    def truth(self, future: Sequence[TraceEvent], cluster: Cluster) -> TraceEvent | None:
        return next((e for e in future if e.kind == "group_stabilized"
                     and e.fields.get("group") == self.group), None)

    def judge(self, answer: Any, truth: TraceEvent | None, cluster: Cluster) -> Feedback:
        name = f"Next generation of {self.group}"
        if isinstance(answer, str) and answer.strip().isdecimal():
            answer = int(answer.strip())
        if isinstance(answer, bool) or not isinstance(answer, int):
            return Feedback(name, "unanswered", "Answer with a generation number.")
        if truth is None:
            return Feedback(name, "wrong", f"{self.group} does not complete a rebalance in the "
                            f"next {HORIZON_MS // 60_000} minutes.")
        gen = truth.fields.get("generation")
        members = truth.fields.get("members")
        if answer == gen:
            return Feedback(name, "correct", f"Stabilized in generation {gen} with {members} "
                            f"members at {_clock(truth.ts)}: each completed join phase adds one.")
        return Feedback(name, "wrong", f"It stabilized in generation {gen} ({members} members, "
                        f"at {_clock(truth.ts)}). Every join phase that completes adds one, "
                        "even when a member joins while another is still rejoining.")


def questions_for(cluster: Cluster, group_id: str = "group-1") -> list[Question]:
    """The questions worth asking now: removal times for consumers in trouble (crashed,
    paused, cut off, dropping heartbeats) that are still members, and the next generation and
    its leader."""
    out: list[Question] = []
    for name, c in cluster.consumers.items():
        if c.config.group_id != group_id or not c.member_id:
            continue
        trouble = c.crashed or cluster.scheduler.now < c.paused_until or \
            name in cluster.network.cut or c.drop_heartbeats
        if trouble:
            out.append(WhenExpelled.of(cluster, name))
    out.append(NextGeneration.of(cluster, group_id))
    out.append(NextLeader.of(cluster, group_id))
    return out


def reveal(recording: Recording, question: Question, answer: Any) -> tuple[Feedback, Any]:
    """Judge `answer` against what the run does next (up to `HORIZON_MS` ahead); returns the
    feedback and the truth (a trace event, or None)."""
    future = recording.lookahead(HORIZON_MS)
    truth = question.truth(future, recording.cluster)
    return question.judge(answer, truth, recording.cluster), truth
