"""Actions: one LLM task per module."""

__all__: list[str] = []
