"""How far cross-conversation search reaches, set per deployment."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from session_recall.recall.errors import InvalidScope

# The reference's window: a quarter of conversations, up to a year.
DEFAULT_LOOKBACK_DAYS = 90
MAX_LOOKBACK_DAYS = 365


class CrossConversationSettings(BaseModel):
    """Off unless enabled: a contact's other conversations are only searched on purpose."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = False
    # A conversation is recent when its last message is at most this many days old.
    lookback_days: int = Field(default=DEFAULT_LOOKBACK_DAYS, ge=1, le=MAX_LOOKBACK_DAYS)
    # The most recently active conversations searched, besides the current one.
    max_conversations: int = Field(default=200, ge=1, le=1000)

    @field_validator("lookback_days", "max_conversations", mode="before")
    @classmethod
    def _unset_means_default(cls, value: Any, info: ValidationInfo) -> Any:
        """An adapter passes None for an option its caller left unset."""
        return cls.model_fields[str(info.field_name)].default if value is None else value

    @classmethod
    def of(cls, **options: Any) -> "CrossConversationSettings":
        """From an adapter's options, None meaning the default; a value out of bounds
        is an `InvalidScope` that names the option and its range."""
        try:
            return cls(**options)
        except ValidationError as err:
            problem = err.errors(include_input=False, include_url=False)[0]
            name = ".".join(str(part) for part in problem["loc"])
            raise InvalidScope(
                f"{name}: {problem['msg']}.",
                hint=f"lookback_days runs from 1 to {MAX_LOOKBACK_DAYS}.",
            ) from None
