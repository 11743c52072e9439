"""`TurnBackoff`: chats whose summary failed wait a growing number of turns before the reply path tries
again, so a model that is down or keeps writing summaries over budget costs one failed call now and
then, not one every turn (the answer is still given from the window meanwhile)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

__all__ = ["MAX_WAIT", "TurnBackoff"]

MAX_WAIT = 32
"""The most exchanges a chat waits between two tries after failures in a row."""


class TurnBackoff:
    """After `n` failures in a row, a chat's next try waits `2**(n-1)` exchanges (two stored turns each;
    at most `MAX_WAIT`): the first failure is tried again on the next turn, as before backoff. A success
    forgets the chat. The table holds at most `size` chats (the least recently failed leaves first, and
    is then tried at once), so months of chats do not grow it. Kept per process: another process serving
    the chat keeps its own."""

    def __init__(self, size: int = 10_000) -> None:
        self.size = size
        self._failed: OrderedDict[Hashable, tuple[int, int]] = OrderedDict()  # key -> (failures, retry at)

    def __len__(self) -> int:
        return len(self._failed)

    def waiting(self, key: Hashable, turn_count: int) -> bool:
        """Whether the chat at `turn_count` stored turns is still waiting after a failure."""
        entry = self._failed.get(key)
        return entry is not None and turn_count < entry[1]

    def failures(self, key: Hashable) -> int:
        """Failures in a row of the chat (0 when the last try succeeded or none failed)."""
        entry = self._failed.get(key)
        return 0 if entry is None else entry[0]

    def failed(self, key: Hashable, turn_count: int) -> int:
        """Note a failure at `turn_count` stored turns; the exchanges to wait before the next try."""
        failures = self.failures(key) + 1
        wait = min(1 << min(failures - 1, MAX_WAIT.bit_length()), MAX_WAIT)
        self._failed[key] = (failures, turn_count + 2 * wait)
        self._failed.move_to_end(key)
        while len(self._failed) > self.size:
            self._failed.popitem(last=False)
        return wait

    def succeeded(self, key: Hashable) -> None:
        self._failed.pop(key, None)
