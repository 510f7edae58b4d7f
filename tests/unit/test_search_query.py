"""The search box's tokenizer: terms, phrases, negation, operators, and refusals."""

import datetime as dt
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from search.backends import fts_expression
from search.query import BadQuery, Term, parse_query

TODAY = dt.date(2026, 11, 30)


def parse(text):
    return parse_query(text, today=TODAY)


def test_words_phrases_and_negation():
    q = parse('deploy "release notes" -rollback -"big bang"')
    assert q.terms == [
        Term("deploy"),
        Term("release notes", phrase=True),
        Term("rollback", negated=True),
        Term("big bang", phrase=True, negated=True),
    ]


def test_an_unterminated_quote_runs_to_the_end():
    assert parse('say "hello world').terms == [Term("say"), Term("hello world", phrase=True)]


def test_operators():
    q = parse('from:@Ari -from:bob in:demo -in:"Old House" after:2026-11-01 before:today x')
    assert q.authors == ["ari"] and q.not_authors == ["bob"]
    assert q.houses == ["demo"] and q.not_houses == ["old house"]
    assert q.after == dt.date(2026, 11, 1) and q.before == TODAY
    assert q.terms == [Term("x")]


def test_the_narrowest_dates_win():
    q = parse("after:2026-01-01 after:2026-02-01 before:2026-05-01 before:yesterday")
    assert q.after == dt.date(2026, 2, 1) and q.before == dt.date(2026, 5, 1)


def test_unknown_operators_and_a_quoted_operator_stay_text():
    assert parse("note:this").terms == [Term("note:this")]
    assert parse('"from:@ari"').terms == [Term("from:@ari", phrase=True)]
    assert parse("https://example.com").terms == [Term("https://example.com")]


def test_terms_without_a_word_character_are_dropped():
    assert parse('deploy - "" ) ( -- &&').terms == [Term("deploy")]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "nothing to search for"),
        ("- ) (", "nothing to search for"),
        ("-deploy", "add a word"),
        ("from:", "from: needs a value"),
        ("after:soon", "not a date"),
        ("-after:2026-01-01", "can't be negated"),
        ("x" * 501, "at most 500"),
        ("w " * 17, "at most 16"),
    ],
)
def test_refusals_say_what_to_change(text, says):
    with pytest.raises(BadQuery, match=says):
        parse(text)


def test_filters_alone_and_filters_with_negatives_are_queries():
    assert parse("from:@ari").positive == []
    assert parse("from:@ari -deploy").negative == [Term("deploy", negated=True)]


@given(st.text(max_size=200))
def test_any_text_parses_or_is_refused_cleanly(text):
    try:
        q = parse(text)
    except BadQuery:
        return
    assert all(t.text for t in q.terms)


@given(st.text(max_size=120))
def test_any_query_is_a_valid_fts5_expression(text):
    """Whatever is typed, the FTS5 expression arbe builds never raises a syntax error."""
    try:
        q = parse(text)
    except BadQuery:
        return
    if not q.positive:
        return
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61')")
    db.execute("INSERT INTO t (body) VALUES ('some text to match against')")
    db.execute("SELECT count(*) FROM t WHERE t MATCH ?", [fts_expression(q.positive, q.negative)])
