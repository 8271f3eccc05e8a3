"""The gate's two ways of finding a summary's copied runs in its input agree."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentcore_autosummary.judging.gate import runs_found_by_search, runs_found_in_one_pass

# Few distinct words, so runs repeat and overlap; words that are prefixes of others.
WORDS = st.lists(st.sampled_from(["a", "ab", "b", "ba", "c", "1", "é"]), max_size=40)


def runs_of(words: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[at : at + size]) for at in range(len(words) - size + 1)}


@given(WORDS, WORDS, st.integers(min_value=1, max_value=4))
def test_a_run_is_found_by_search_when_one_pass_finds_it(
    summary: list[str], source: list[str], size: int
) -> None:
    runs = runs_of(summary, size)
    found = runs_found_in_one_pass(runs, source)
    assert runs_found_by_search(runs, source) == found
    assert found == runs & runs_of(source, size)


def test_a_run_is_whole_words() -> None:
    """ "b c" is not in "ab cd": a run found inside longer words would be a false copy."""
    assert runs_found_by_search({("b", "c")}, ["ab", "cd"]) == set()
    assert runs_found_by_search({("ab", "cd")}, ["x", "ab", "cd"]) == {("ab", "cd")}
