"""Kafka's error codes on the coordinator paths, and the exception that carries one.

Names, numbers, default messages and the Java exception class come from Kafka's
`clients/.../common/protocol/Errors.java`; whether an error is retriable follows whether its
Java exception extends `RetriableException`. The kit raises `KafkaError` wherever Kafka would
complete a future exceptionally, so a learner sees the same name and number as on a real broker.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = [
    "ErrorInfo",
    "Errors",
    "KafkaError",
    "IllegalStateTransition",
    "handle_operation_exception",
    "java_string",
]

_JAVA_PACKAGE = "org.apache.kafka.common.errors."


@dataclass(frozen=True)
class ErrorInfo:
    code: int
    message: str | None
    exception: str | None  # simple name of Kafka's Java exception class
    retriable: bool


class Errors(Enum):
    """The subset of Kafka's `Errors` enum (`org.apache.kafka.common.protocol.Errors`) that the
    coordinator paths produce."""

    UNKNOWN_SERVER_ERROR = ErrorInfo(
        -1, "The server experienced an unexpected error when processing the request.",
        "UnknownServerException", False)
    NONE = ErrorInfo(0, None, None, False)
    UNKNOWN_TOPIC_OR_PARTITION = ErrorInfo(
        3, "This server does not host this topic-partition.",
        "UnknownTopicOrPartitionException", True)
    INVALID_FETCH_SIZE = ErrorInfo(
        4, "The requested fetch size is invalid.", "InvalidFetchSizeException", False)
    NOT_LEADER_OR_FOLLOWER = ErrorInfo(
        6, "For requests intended only for the leader, this error indicates that the broker is "
        "not the current leader. For requests intended for any replica, this error indicates "
        "that the broker is not a replica of the topic partition.",
        "NotLeaderOrFollowerException", True)
    REQUEST_TIMED_OUT = ErrorInfo(7, "The request timed out.", "TimeoutException", True)
    MESSAGE_TOO_LARGE = ErrorInfo(
        10, "The request included a message larger than the max message size the server will "
        "accept.", "RecordTooLargeException", False)
    OFFSET_METADATA_TOO_LARGE = ErrorInfo(
        12, "The metadata field of the offset request was too large.",
        "OffsetMetadataTooLarge", False)
    NETWORK_EXCEPTION = ErrorInfo(
        13, "The server disconnected before a response was received.", "NetworkException", True)
    COORDINATOR_LOAD_IN_PROGRESS = ErrorInfo(
        14, "The coordinator is loading and hence can't process requests.",
        "CoordinatorLoadInProgressException", True)
    COORDINATOR_NOT_AVAILABLE = ErrorInfo(
        15, "The coordinator is not available.", "CoordinatorNotAvailableException", True)
    NOT_COORDINATOR = ErrorInfo(
        16, "This is not the correct coordinator.", "NotCoordinatorException", True)
    RECORD_LIST_TOO_LARGE = ErrorInfo(
        18, "The request included message batch larger than the configured segment size on the "
        "server.", "RecordBatchTooLargeException", False)
    NOT_ENOUGH_REPLICAS = ErrorInfo(
        19, "Messages are rejected since there are fewer in-sync replicas than required.",
        "NotEnoughReplicasException", True)
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = ErrorInfo(
        20, "Messages are written to the log, but to fewer in-sync replicas than required.",
        "NotEnoughReplicasAfterAppendException", True)
    ILLEGAL_GENERATION = ErrorInfo(
        22, "Specified group generation id is not valid.", "IllegalGenerationException", False)
    INCONSISTENT_GROUP_PROTOCOL = ErrorInfo(
        23, "The group member's supported protocols are incompatible with those of existing "
        "members or first group member tried to join with empty protocol type or empty protocol "
        "list.", "InconsistentGroupProtocolException", False)
    INVALID_GROUP_ID = ErrorInfo(
        24, "The configured groupId is invalid.", "InvalidGroupIdException", False)
    UNKNOWN_MEMBER_ID = ErrorInfo(
        25, "The coordinator is not aware of this member.", "UnknownMemberIdException", False)
    INVALID_SESSION_TIMEOUT = ErrorInfo(
        26, "The session timeout is not within the range allowed by the broker (as configured "
        "by group.min.session.timeout.ms and group.max.session.timeout.ms).",
        "InvalidSessionTimeoutException", False)
    REBALANCE_IN_PROGRESS = ErrorInfo(
        27, "The group is rebalancing, so a rejoin is needed.",
        "RebalanceInProgressException", False)
    INVALID_COMMIT_OFFSET_SIZE = ErrorInfo(
        28, "The committing offset data size is not valid.",
        "InvalidCommitOffsetSizeException", False)
    GROUP_AUTHORIZATION_FAILED = ErrorInfo(
        30, "Group authorization failed.", "GroupAuthorizationException", False)
    UNSUPPORTED_VERSION = ErrorInfo(
        35, "The version of API is not supported.", "UnsupportedVersionException", False)
    INVALID_REQUEST = ErrorInfo(
        42, "This most likely occurs because of a request being malformed by the client library "
        "or the message was sent to an incompatible broker. See the broker logs for more "
        "details.", "InvalidRequestException", False)
    KAFKA_STORAGE_ERROR = ErrorInfo(
        56, "Disk error when trying to access log file on the disk.",
        "KafkaStorageException", True)
    NON_EMPTY_GROUP = ErrorInfo(68, "The group is not empty.", "GroupNotEmptyException", False)
    GROUP_ID_NOT_FOUND = ErrorInfo(
        69, "The group id does not exist.", "GroupIdNotFoundException", False)
    MEMBER_ID_REQUIRED = ErrorInfo(
        79, "The group member needs to have a valid member id before actually entering a "
        "consumer group.", "MemberIdRequiredException", False)
    GROUP_MAX_SIZE_REACHED = ErrorInfo(
        81, "The consumer group has reached its max size.", "GroupMaxSizeReachedException", False)
    FENCED_INSTANCE_ID = ErrorInfo(
        82, "The broker rejected this static consumer since another consumer with the same "
        "group.instance.id has registered with a different member.id.",
        "FencedInstanceIdException", False)
    GROUP_SUBSCRIBED_TO_TOPIC = ErrorInfo(
        86, "Deleting offsets of a topic is forbidden while the consumer group is actively "
        "subscribed to it.", "GroupSubscribedToTopicException", False)
    UNSTABLE_OFFSET_COMMIT = ErrorInfo(
        88, "There are unstable offsets that need to be cleared.",
        "UnstableOffsetCommitException", True)
    FENCED_MEMBER_EPOCH = ErrorInfo(
        110, "The member epoch is fenced by the group coordinator. The member must abandon all "
        "its partitions and rejoin.", "FencedMemberEpochException", False)
    UNRELEASED_INSTANCE_ID = ErrorInfo(
        111, "The instance ID is still used by another member in the consumer group. That "
        "member must leave first.", "UnreleasedInstanceIdException", False)
    UNSUPPORTED_ASSIGNOR = ErrorInfo(
        112, "The assignor or its version range is not supported by the consumer group.",
        "UnsupportedAssignorException", False)
    STALE_MEMBER_EPOCH = ErrorInfo(
        113, "The member epoch is stale. The member must retry after receiving its updated "
        "member epoch via the ConsumerGroupHeartbeat API.", "StaleMemberEpochException", False)

    @property
    def code(self) -> int:
        return self.value.code

    @property
    def message(self) -> str | None:
        return self.value.message

    @property
    def retriable(self) -> bool:
        return self.value.retriable

    @property
    def java_exception(self) -> str | None:
        """Fully qualified Java class name, as Kafka prints it in `exception.toString()`."""
        return None if self.value.exception is None else _JAVA_PACKAGE + self.value.exception

    @classmethod
    def for_code(cls, code: int) -> Errors:
        for error in cls:
            if error.code == code:
                return error
        known = ", ".join(f"{e.name}={e.code}" for e in cls)
        raise ValueError(f"unknown Kafka error code {code}; the kit knows: {known}")

    def exception(self, message: str | None = None) -> KafkaError:
        """The exception Kafka would raise for this error (like `Errors.X.exception(msg)`)."""
        if self is Errors.NONE:
            raise ValueError("Errors.NONE is success and has no exception")
        return KafkaError(self, message)

    def __repr__(self) -> str:
        return f"Errors.{self.name}"

    def __str__(self) -> str:
        return self.name


class KafkaError(Exception):
    """An exception carrying one of Kafka's error codes (`ApiException` in Kafka)."""

    def __init__(self, error: Errors, message: str | None = None) -> None:
        self.error = error
        self.detail = message if message is not None else error.message
        super().__init__(f"{error.name} ({error.code}): {self.detail}")

    def __reduce__(self) -> tuple[type[KafkaError], tuple[Errors, str]]:
        # Exceptions pickle as cls(*args), and args holds the rendered message, not the error: a
        # recording's checkpoint holding one (a pending fail_next_append) could not be restored.
        return KafkaError, (self.error, self.detail)

    @property
    def code(self) -> int:
        return self.error.code

    def java_string(self) -> str:
        """How Kafka's `Throwable.toString()` renders it in log lines."""
        return f"{self.error.java_exception}: {self.detail}"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, KafkaError) and other.error is self.error
                and other.detail == self.detail)

    def __hash__(self) -> int:
        return hash((self.error, self.detail))

    def __repr__(self) -> str:
        return f"KafkaError({self.error.name}, {self.detail!r})"


class IllegalStateTransition(RuntimeError):
    """A state machine was asked for a transition its table does not allow."""

    def __init__(self, machine: str, current: object, target: object, allowed: list[str]) -> None:
        self.machine, self.current, self.target = machine, current, target
        allowed_text = ", ".join(allowed) if allowed else "nothing (only the constructor sets it)"
        super().__init__(
            f"{machine}: cannot transition from {current} to {target}; "
            f"{target} may only be entered from {allowed_text}")


# CoordinatorOperationExceptionHelper.handleOperationException, as a table.
_OPERATION_ERROR_MAP: dict[Errors, Errors] = {
    Errors.NETWORK_EXCEPTION: Errors.COORDINATOR_LOAD_IN_PROGRESS,
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.REQUEST_TIMED_OUT: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.RECORD_LIST_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.INVALID_FETCH_SIZE: Errors.UNKNOWN_SERVER_ERROR,
}

_OFFSET_FETCH_OVERRIDES: dict[Errors, Errors] = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.NOT_COORDINATOR,
    Errors.NOT_ENOUGH_REPLICAS: Errors.NOT_COORDINATOR,
    Errors.REQUEST_TIMED_OUT: Errors.NOT_COORDINATOR,
}


def handle_operation_exception(exc: BaseException, *, offset_fetch: bool = False) -> Errors:
    """The error a client sees for a failed coordinator operation (Kafka's
    `CoordinatorOperationExceptionHelper.handleOperationException`).

    Internal errors such as a write timeout are not what Kafka sends back: a timed-out write is
    answered COORDINATOR_NOT_AVAILABLE so the client rediscovers the coordinator. Anything that
    is not a `KafkaError` is an unexpected failure and becomes UNKNOWN_SERVER_ERROR.
    """
    if not isinstance(exc, KafkaError):
        return Errors.UNKNOWN_SERVER_ERROR
    if offset_fetch and exc.error in _OFFSET_FETCH_OVERRIDES:
        return _OFFSET_FETCH_OVERRIDES[exc.error]
    return _OPERATION_ERROR_MAP.get(exc.error, exc.error)


def java_string(exc: BaseException) -> str:
    """`Throwable.toString()` as Kafka's log lines show it (class name, colon, message)."""
    if isinstance(exc, KafkaError):
        return exc.java_string()
    return f"java.lang.{_JAVA_LANG.get(type(exc).__name__, 'RuntimeException')}: {exc}"


_JAVA_LANG = {"ValueError": "IllegalArgumentException", "RuntimeError": "IllegalStateException",
              "KeyError": "IllegalStateException", "TypeError": "IllegalArgumentException"}
