"""search_symbols and code_index's vectors (code/search.py, ops/code.py) on a real git
repository, indexed by the real extractor and embedded by the real MiniLM model: a function
found by a paraphrase of its docstring and by its name, the kind filter, --no-embed, and the
words of code."""

from __future__ import annotations

from pathlib import Path

import pytest

from chitta.code import search
from chitta.ops import OPERATIONS
from chitta.ops.spec import Context

pytest.importorskip("tree_sitter_python")

LIB = {
    "lib/text.py": (
        "def slugify(title):\n"
        '    """Turn a title into a lower-case, hyphen-separated URL fragment."""\n'
        "    return '-'.join(title.lower().split())\n\n\n"
        "def count_vowels(word):\n"
        '    """How many vowels a word holds."""\n'
        "    return sum(c in 'aeiou' for c in word)\n"
    ),
    "lib/net.py": (
        "class RetryPolicy:\n"
        '    """How often a failed request is sent again, and how long to wait between."""\n\n'
        "    def next_delay(self, attempt):\n"
        '        """Exponential backoff: the wait before the given attempt."""\n'
        "        return 2 ** attempt\n\n\n"
        "def fetch_json(url):\n"
        '    """Download a document over HTTP and decode it as JSON."""\n'
        "    return RetryPolicy().next_delay(1)\n"
    ),
    "lib/store.py": (
        "def parseHTTPRequest(raw):\n"
        '    """Read the method, path and headers of a request."""\n'
        "    return raw.split()\n\n\n"
        "def save_to_disk(path, data):\n"
        '    """Write bytes to a file atomically."""\n'
        "    open(path, 'wb').write(data)\n"
    ),
}


def op(chitta, name: str, **params):
    return OPERATIONS[name].call(chitta, params, Context(home=chitta.store.data_dir))


@pytest.fixture
def lib(git_repo) -> Path:
    return git_repo(LIB)


def names(reply) -> list[str]:
    return [s["name"] for s in reply["symbols"]]


def test_a_function_is_found_by_a_paraphrase_of_its_docstring(chitta, lib: Path) -> None:
    indexed = op(chitta, "code_index", path=str(lib), realm="work")
    assert indexed["unembedded"] == 0 and indexed["symbols"] >= 9
    found = op(chitta, "search_symbols", query="make a web address part from a heading",
               realm="work", limit=3)  # fmt: skip
    assert names(found)[0] == "slugify"
    assert "sem" in found["symbols"][0]["lanes"]
    retry = op(chitta, "search_symbols", query="wait longer after each failure", realm="work",
               limit=3)  # fmt: skip
    assert names(retry)[0] in {"next_delay", "RetryPolicy"}
    assert found["unembedded"] == 0 and found["searched"] == indexed["symbols"]


def test_a_function_is_found_by_its_name_and_by_its_words(chitta, lib: Path) -> None:
    op(chitta, "code_index", path=str(lib), realm="work")
    exact = op(chitta, "search_symbols", query="fetch_json", realm="work", limit=3)
    assert names(exact)[0] == "fetch_json" and exact["symbols"][0]["lanes"]["kw"] == 1
    # camelCase and acronyms are split, and words stemmed: "parsing request" finds it.
    camel = op(chitta, "search_symbols", query="parsing request", realm="work", limit=3)
    assert names(camel)[0] == "parseHTTPRequest"


def test_kind_filters_and_realms_are_kept_apart(chitta, lib: Path) -> None:
    op(chitta, "code_index", path=str(lib), realm="work")
    classes = op(chitta, "search_symbols", query="retry a request", realm="work", kind="class")
    assert {s["kind"] for s in classes["symbols"]} == {"class"}
    assert names(classes)[0] == "RetryPolicy"
    other = op(chitta, "search_symbols", query="slugify", realm="elsewhere")
    assert other["symbols"] == [] and other["searched"] == 0


def test_no_embed_indexes_for_keywords_and_a_later_index_embeds_what_was_left(
    chitta, lib: Path
) -> None:
    bare = op(chitta, "code_index", path=str(lib), realm="work", no_embed=True)
    assert bare["unembedded"] == bare["symbols"]
    by_name = op(chitta, "search_symbols", query="save_to_disk", realm="work", limit=2)
    assert names(by_name)[0] == "save_to_disk"
    assert by_name["unembedded"] == bare["symbols"]
    assert "sem" not in by_name["symbols"][0]["lanes"]
    # Nothing changed on disk: the next index embeds the symbols the first left bare.
    again = op(chitta, "code_index", path=str(lib), realm="work")
    assert again["indexed"] == 0 and again["unembedded"] == 0
    meaning = op(chitta, "search_symbols", query="persist bytes into a file", realm="work",
                 limit=2)  # fmt: skip
    assert names(meaning)[0] == "save_to_disk" and meaning["unembedded"] == 0


def test_an_edited_file_is_searched_as_it_is_now(chitta, lib: Path, write_files,
                                                 git_in) -> None:  # fmt: skip
    op(chitta, "code_index", path=str(lib), realm="work")
    assert names(op(chitta, "search_symbols", query="count_vowels", realm="work"))[0] == (
        "count_vowels")  # fmt: skip
    write_files(lib, {"lib/text.py": LIB["lib/text.py"].replace("count_vowels", "tally_letters")})
    git_in(lib, "commit", "-qam", "rename")
    op(chitta, "code_index", path=str(lib), realm="work")
    found = op(chitta, "search_symbols", query="count_vowels", realm="work")
    assert "count_vowels" not in names(found)
    assert names(op(chitta, "search_symbols", query="tally letters", realm="work"))[0] == (
        "tally_letters")  # fmt: skip


def test_the_words_of_code() -> None:
    assert search.words("parseHTTPRequest") == ["parse", "HTTP", "Request"]
    assert search.words("a::b.c_d") == ["a", "b", "c", "d"]
    assert search.tokens("parsing_requests") == ["pars", "request"]
    assert search.tokens("") == []


def test_symbols_are_embedded_in_slices_of_like_lengths() -> None:
    texts = ["a" * n for n in (50, 3, 400, 7, 120, 9, 1)]
    slices = search.like_lengths(texts, size=3)
    assert [len(s) for s in slices] == [3, 3, 1]
    assert sorted(i for s in slices for i in s) == list(range(len(texts)))  # each once
    lengths = [[len(texts[i]) for i in s] for s in slices]
    assert lengths == [[1, 3, 7], [9, 50, 120], [400]]
    assert search.like_lengths([]) == []
