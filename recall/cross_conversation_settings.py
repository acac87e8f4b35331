"""How far cross-conversation search reaches, set per deployment."""

from pydantic import BaseModel, ConfigDict, Field


class CrossConversationSettings(BaseModel):
    """Off unless enabled: a contact's other conversations are only searched on purpose."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = False
    # A conversation is recent when its last message is at most this many days old.
    lookback_days: int = Field(default=90, ge=1, le=365)
    # The most recently active conversations searched, besides the current one.
    max_conversations: int = Field(default=200, ge=1, le=1000)
