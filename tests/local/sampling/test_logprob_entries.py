"""Logprobs entries rank without sorting the whole vocabulary, and give what the full sort gave.

A logprobs entry holds the drawn token and the k most likely ones, each with its 1-based rank.
The sampler finds them with a top-k and a count; where equal values would make the order depend on
how a sort breaks ties it sorts the whole vocabulary as before. These tests compare both with the
full sort on real log-probability tables: distinct values, ties at the top and around the token,
-inf entries, and a NaN.
"""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")


def _decoder() -> Any:
    from ct_local.model import tinylm
    from ct_local.model.sampler import Decoder

    return Decoder(tinylm.build_model("ct-local-tiny"), tinylm.ByteTokenizer(), frozenset({tinylm.EOS_ID}))


def _sorted_entry(decoder: Any, logprobs: Any, token: int, k: int) -> dict[str, Any]:
    """The entry as sorting the whole vocabulary gives it."""
    ranks = torch.argsort(logprobs, descending=True)
    entry = {str(token): decoder._logprob(logprobs, token, int((ranks == token).nonzero()[0][0]) + 1)}
    for rank, alt in enumerate(ranks[:k].tolist(), start=1):
        entry.setdefault(str(alt), decoder._logprob(logprobs, alt, rank))
    return entry


def _tables() -> list[Any]:
    generator = torch.Generator().manual_seed(0)
    tables = []
    for size in (8, 260, 2048, 32000):
        logits = torch.randn(size, generator=generator)
        tables.append(torch.log_softmax(logits, dim=-1))
        # Few distinct values: ties everywhere, the top included (as bf16 logits give).
        coarse = torch.randint(0, 6, (size,), generator=generator).float()
        tables.append(torch.log_softmax(coarse, dim=-1))
        masked = logits.clone()
        masked[torch.randint(0, size, (size // 2,), generator=generator)] = -float("inf")
        tables.append(torch.log_softmax(masked, dim=-1))
    return tables


def test_entries_match_the_full_sort_on_distinct_tied_and_masked_tables() -> None:
    from ct_local.model.sampler import _top_and_rank

    decoder = _decoder()
    fast = slow = 0
    for table in _tables():
        finite = torch.isfinite(table).nonzero().flatten().tolist()
        for token in (finite[0], finite[-1], int(torch.argmax(table)), finite[len(finite) // 2]):
            for k in (0, 1, 5, 20):
                k = min(k, table.numel() - 1)
                assert decoder._entry(table, token, k) == _sorted_entry(decoder, table, token, k)
                if _top_and_rank(table, token, k) is None:
                    slow += 1
                else:
                    fast += 1
    # Both ways were taken: distinct tables rank without the sort, tied ones fall back to it.
    assert fast > 0 and slow > 0


def test_a_tie_with_the_token_or_in_the_top_k_falls_back_to_the_sort() -> None:
    from ct_local.model.sampler import _top_and_rank

    table = torch.tensor([-1.0, -2.0, -2.0, -3.0, -4.0])
    assert _top_and_rank(table, 0, 1) == ([0], 1)
    assert _top_and_rank(table, 3, 0) == ([], 4)
    assert _top_and_rank(table, 1, 0) is None  # the token ties with another
    assert _top_and_rank(table, 0, 2) is None  # the second place is a tie
    assert _top_and_rank(table, 4, 3) is None  # a tie inside the top three
    assert _top_and_rank(table, 3, 5) is None  # more asked for than the table holds
    assert _top_and_rank(torch.tensor([0.0, float("nan"), -1.0]), 1, 1) is None
