"""CSV is read by pyarrow where it reads a file as the csv module (strict) does, and by the csv module otherwise: the
same rows, the same refusals, whichever reads it."""

from __future__ import annotations

import random

import pytest

from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers import readers


def lenient(path) -> bool:
    """Whether the scan finds, anywhere in the file, what pyarrow reads otherwise than the csv module."""
    scan = readers._Scan(path)
    try:
        return scan.lenient_before(scan.size)
    finally:
        scan.close()


def by_csv_module(path):
    try:
        return [r for c in readers._csv_stream(path, readers._lines(path, False, {"read": 0}), 3) for r in c]
    except ImportFailed as exc:
        return f"refused: {exc}"


def as_read(path):
    try:
        return [r for c in readers._fast_csv_stream(path, 3, {"read": 0}) for r in c]
    except ImportFailed as exc:
        return f"refused: {exc}"


PIECES = ["a", "b c", ",", '"', "\n", "\r\n", " ", "é", "\u202e", '[{"k": "v"}]', '{"a":1,"b":"x"}', ""]


def random_file(rng: random.Random) -> bytes:
    def cell() -> str:
        v = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 5)))
        if rng.random() < 0.6 or any(ch in v for ch in ',"\r\n'):
            return '"' + v.replace('"', '""') + '"'
        return v

    width = rng.randrange(1, 4)
    lines = [",".join(f"h{k}" for k in range(width))]
    for _ in range(rng.randrange(0, 6)):
        lines.append(",".join(cell() for _ in range(width if rng.random() < 0.9 else rng.randrange(1, 5))))
        if rng.random() < 0.1:
            lines.append("")
    raw = (("\n" if rng.random() < 0.8 else "\r\n").join(lines) + ("\n" if rng.random() < 0.7 else "")).encode()
    if rng.random() < 0.1:
        raw = b"\xef\xbb\xbf" + raw
    if rng.random() < 0.1:      # a stray byte: not UTF-8, a NUL, a quote, a bare carriage return
        k = rng.randrange(len(raw))
        raw = raw[:k] + rng.choice([b"\xff", b"\x00", b'"', b"\r"]) + raw[k:]
    return raw


@pytest.mark.parametrize("block", [None, 7])     # 7 bytes: runs of quotes and CRLFs cut between the scan's blocks
def test_random_files_read_alike_by_both(tmp_path, monkeypatch, block):
    if block:
        monkeypatch.setattr(readers, "SCAN_BLOCK_BYTES", block)
    rng = random.Random(20261126)
    fast = 0
    for i in range(600):
        path = tmp_path / f"{i}.csv"
        path.write_bytes(random_file(rng))
        assert as_read(path) == by_csv_module(path), path.read_bytes()
        fast += readers._plain_header(path) is not None and not lenient(path)
    assert fast > 400      # most of them were read by pyarrow


@pytest.mark.parametrize("body", [
    b'"ab"c,d\n',          # text after a closing quote: pyarrow reads abc
    b'"q" ,x\n',           # a space after it: pyarrow reads 'q '
    b'""x,1\n',            # an empty quoted text, then x: pyarrow reads x
    b',"never closed\n',   # pyarrow keeps it to the end of the file
    b"1,2\r3,4\n",         # a bare carriage return: pyarrow breaks the line there
])
def test_what_pyarrow_reads_leniently_is_refused_as_the_csv_module_refuses(tmp_path, body):
    path = tmp_path / "r.csv"
    path.write_bytes(b"h1,h2\n" + body)
    assert lenient(path)
    with pytest.raises(ImportFailed, match="not a valid CSV file"):
        list(readers.stream_records(path))


def test_a_nul_is_left_to_the_csv_module(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"h1,h2\n1,a\x00b\n")
    assert lenient(path) and as_read(path) == by_csv_module(path)


@pytest.mark.parametrize("body", [
    b'"[{""k"":""v"",""t"":""w""}]",1\n',   # compact JSON in a quoted cell: quotes after commas, inside quotes
    b'"x\n""y""",1\n',                          # a line break inside a quoted text, then doubled quotes
    b'ab""c,1\n',                                # doubled quotes in a bare text read alike
    b'"""x",1\n',
    b"1,2\r\n3,4\r\n",
])
def test_plain_csv_is_read_by_pyarrow(tmp_path, monkeypatch, body):
    path = tmp_path / "r.csv"
    path.write_bytes(b"h1,h2\n" + body)
    expected = by_csv_module(path)
    monkeypatch.setattr(readers, "_csv_stream", lambda *a: pytest.fail("read by the csv module"))
    assert as_read(path) == expected


def test_a_row_pyarrow_refuses_mid_file_is_read_on_by_the_csv_module(tmp_path):
    """A short row (the csv module pads it) after several chunks: the rows before it are not read twice."""
    path = tmp_path / "r.csv"
    path.write_bytes(b"h1,h2\n" + b"".join(b"%d,x\n" % i for i in range(10)) + b"10\n11,y\n")
    got = [r for c in readers._fast_csv_stream(path, 3, {"read": 0}) for r in c]
    assert [r["h1"] for r in got] == [str(i) for i in range(12)]
    assert got[10] == {"h1": "10", "h2": None}


def test_a_crlf_file_is_read_by_pyarrow_wherever_its_blocks_are_cut(tmp_path, monkeypatch):
    """A CRLF cut between two blocks of the scan sent the whole file to the csv module."""
    path = tmp_path / "r.csv"
    path.write_bytes(b"h1,h2\r\n" + b"".join(b"%d,x\r\n" % i for i in range(200)))
    monkeypatch.setattr(readers, "SCAN_BLOCK_BYTES", 6)     # "h1,h2\r" then "\n0,x\r\n...": cut inside the CRLF
    assert not lenient(path)


def test_rows_come_before_the_whole_file_is_scanned_and_a_late_lenient_row_is_the_csv_modules(tmp_path, monkeypatch):
    """The scan keeps pace with pyarrow: the first rows (and their progress) come before the end of a large file is
    looked at; a lenient row far down is then read by the csv module, which refuses it naming its row."""
    monkeypatch.setattr(readers, "ARROW_BLOCK_BYTES", 1 << 16)
    monkeypatch.setattr(readers, "SCAN_BLOCK_BYTES", 1 << 16)
    path = tmp_path / "r.csv"       # 8 MB: past what pyarrow reads ahead (8 blocks)
    good = b"".join(b'%d,"text ""%d"" here%s"\n' % (i, i, b"." * 200) for i in range(40_000))
    path.write_bytes(b"h1,h2\n" + good + b'40000,"ab"c\n')
    asked: list[int] = []
    real = readers._Scan.lenient_before

    def spy(self, offset):
        asked.append(offset)
        return real(self, offset)

    monkeypatch.setattr(readers._Scan, "lenient_before", spy)
    chunks = readers._fast_csv_stream(path, 100, {"read": 0})
    first = next(chunks)
    assert first[0] == {"h1": "0", "h2": 'text "0" here' + "." * 200}
    assert max(asked) < path.stat().st_size / 2        # not scanned to the end before the first rows
    with pytest.raises(ImportFailed, match="not a valid CSV file") as err:
        list(chunks)
    assert "near data row 40001" in str(err.value)
