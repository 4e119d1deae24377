"""The goalgui engine: pure asyncio, no Qt, no HTTP, no SQLite.

The names below are the contract other layers and plugins build on.
"""

from .confirm import ConfirmationAnswer, ConfirmationRequest, NeedsConfirmation, Outcome, approve_all
from .events import Event
from .lifecycle import IllegalTransition, InputError, Limits, RunState, parse_duration
from .memory import Embedder, FindingsMemory, HashingEmbedder
from .model import (
    AuthenticationFailed,
    BadResponse,
    GoalView,
    Model,
    ModelReply,
    ModelRequest,
    ProviderError,
    ProviderUnavailable,
    RateLimited,
    Usage,
)
from .permissions import Action, Decision, PermissionMode, decide
from .record import Goal, GoalStatus, RunRecord
from .run import Run
from .strategies import check_strategy

__all__ = [
    "Action", "Decision", "PermissionMode", "decide",
    "AuthenticationFailed", "BadResponse", "ConfirmationAnswer", "ConfirmationRequest", "Embedder",
    "Event", "FindingsMemory", "Goal", "GoalStatus", "GoalView", "HashingEmbedder", "IllegalTransition",
    "InputError", "Limits", "Model", "ModelReply", "ModelRequest", "NeedsConfirmation", "Outcome",
    "ProviderError", "ProviderUnavailable", "RateLimited", "Run", "RunRecord", "RunState", "Usage",
    "approve_all", "check_strategy", "parse_duration",
]
