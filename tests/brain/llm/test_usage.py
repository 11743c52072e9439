"""Usage sums: tokens of both calls, counted locally when either was. Pure."""

from __future__ import annotations

import itertools

from brain.llm.usage import Usage


def test_a_sum_is_the_tokens_of_both_whatever_is_zero() -> None:
    values = [
        Usage(prompt_tokens=p, completion_tokens=c, counted_locally=local)
        for p, c, local in itertools.product((0, 3), (0, 5), (False, True))
    ]
    for a, b in itertools.product(values, repeat=2):
        total = a + b
        assert (total.prompt_tokens, total.completion_tokens, total.counted_locally) == (
            a.prompt_tokens + b.prompt_tokens,
            a.completion_tokens + b.completion_tokens,
            a.counted_locally or b.counted_locally,
        ), (a, b)
    nothing = Usage(prompt_tokens=0, completion_tokens=0)
    some = Usage(prompt_tokens=2, completion_tokens=1)
    assert nothing + some is some and some + nothing is some  # frozen: no new value for adding nothing
