"""Bad input gives a clear error naming the file and the line (or the record)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from irt import FitData, IRTDataError, load_embeddings, save_embeddings
from irt.cli import main
from tests.irt.irt_testutil import write_jsonl


@pytest.fixture()
def tiny(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "text": "one"}, {"id": "q2", "text": "two"}])
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": "a1", "name": "A", "type": "ai"}, {"id": "h1", "type": "human"}])
    return tmp_path, q, a


def _responses(tmp_path, rows, name="r.jsonl"):
    return write_jsonl(tmp_path / name, rows)


def test_good_files_load(tiny):
    d, q, a = tiny
    r = _responses(d, [{"query_id": "q1", "agent_id": "a1", "ruling": 1}, {"query_id": "q2", "agent_id": "h1", "ruling": False}])
    data = FitData.from_files(q, a, r)
    assert data.item_ids == ["q1", "q2"] and data.agent_types == ["ai", "human"]
    assert data.responses.ruling.tolist() == [1.0, 0.0]
    assert data.agents[1]["name"] == "h1"


@pytest.mark.parametrize(
    "row, message",
    [
        ({"query_id": "q9", "agent_id": "a1", "ruling": 1}, "unknown query_id 'q9'"),
        ({"query_id": "q1", "agent_id": "zz", "ruling": 1}, "unknown agent_id 'zz'"),
        ({"query_id": "q1", "agent_id": "a1", "ruling": 2}, "ruling must be 0 or 1, got 2"),
        ({"query_id": "q1", "agent_id": "a1", "ruling": "1"}, "ruling must be 0 or 1, got '1'"),
        ({"query_id": "q1", "agent_id": "a1", "ruling": 0.5}, "ruling must be 0 or 1, got 0.5"),
        ({"query_id": "q1", "agent_id": "a1", "ruling": None}, "ruling must be 0 or 1, got None"),
        ({"query_id": "q1", "agent_id": "a1"}, "missing field 'ruling'"),
        ({"agent_id": "a1", "ruling": 1}, "missing field 'query_id'"),
    ],
)
def test_bad_response_names_file_and_line(tiny, row, message):
    d, q, a = tiny
    r = _responses(d, [{"query_id": "q1", "agent_id": "a1", "ruling": 1}, row])
    with pytest.raises(IRTDataError) as exc:
        FitData.from_files(q, a, r)
    assert str(exc.value).startswith(f"{r}:2: ")
    assert message in str(exc.value)


def test_blank_lines_keep_line_numbers(tiny):
    d, q, a = tiny
    r = d / "r.jsonl"
    r.write_text('{"query_id": "q1", "agent_id": "a1", "ruling": 1}\n\n{"query_id": "q1", "agent_id": "a1", "ruling": 7}\n')
    with pytest.raises(IRTDataError, match=r"r\.jsonl:3: ruling must be 0 or 1"):
        FitData.from_files(q, a, r)


def test_not_json_and_not_an_object(tiny):
    d, q, a = tiny
    r = d / "r.jsonl"
    r.write_text('{"query_id": "q1", "agent_id": "a1", "ruling": 1}\n{oops\n')
    with pytest.raises(IRTDataError, match=r"r\.jsonl:2: not valid JSON"):
        FitData.from_files(q, a, r)
    r.write_text("[1, 2]\n")
    with pytest.raises(IRTDataError, match=r"r\.jsonl:1: expected a JSON object"):
        FitData.from_files(q, a, r)


@pytest.mark.parametrize("which", ["q", "a", "r"])
def test_empty_files(tiny, which):
    d, q, a = tiny
    r = _responses(d, [{"query_id": "q1", "agent_id": "a1", "ruling": 1}])
    paths = {"q": q, "a": a, "r": r}
    paths[which].write_text("\n\n")
    with pytest.raises(IRTDataError, match="empty file"):
        FitData.from_files(paths["q"], paths["a"], paths["r"])
    with pytest.raises(IRTDataError, match=str(paths[which])):
        FitData.from_files(paths["q"], paths["a"], paths["r"])


def test_duplicate_ids_and_missing_text(tiny):
    d, q, a = tiny
    r = _responses(d, [{"query_id": "q1", "agent_id": "a1", "ruling": 1}])
    q.write_text('{"id": "q1", "text": "x"}\n{"id": "q1", "text": "y"}\n')
    with pytest.raises(IRTDataError, match=r"q\.jsonl:2: duplicate query id 'q1' \(first at .*q\.jsonl:1\)"):
        FitData.from_files(q, a, r)
    q.write_text('{"id": "q1", "text": 5}\n')
    with pytest.raises(IRTDataError, match=r"q\.jsonl:1: field 'text' must be a string"):
        FitData.from_files(q, a, r)


def test_missing_file(tmp_path):
    with pytest.raises(IRTDataError, match="no such file"):
        FitData.from_files(tmp_path / "nope.jsonl", tmp_path / "a", tmp_path / "r")


def test_nan_embeddings_name_file_row_and_id(tiny):
    d, q, a = tiny
    r = _responses(d, [{"query_id": "q1", "agent_id": "a1", "ruling": 1}])
    emb = np.ones((2, 3), dtype=np.float32)
    emb[1, 2] = np.nan
    save_embeddings(d / "E.npz", ["q1", "q2"], emb)
    with pytest.raises(IRTDataError) as exc:
        FitData.from_files(q, a, r, embeddings=d / "E.npz")
    assert str(exc.value).startswith(f"{d / 'E.npz'}: embedding row 1 (id 'q2') contains NaN")


def test_embeddings_must_cover_every_query(tiny):
    d, q, a = tiny
    r = _responses(d, [{"query_id": "q1", "agent_id": "a1", "ruling": 1}])
    save_embeddings(d / "E.npz", ["q1"], np.ones((1, 3)))
    with pytest.raises(IRTDataError, match=r"E\.npz: no embedding for query id 'q2'"):
        FitData.from_files(q, a, r, embeddings=d / "E.npz")


def test_embeddings_file_shape_errors(tmp_path):
    p = tmp_path / "E.npz"
    with open(p, "wb") as fh:
        np.savez(fh, ids=np.array(["a", "b"]), embeddings=np.ones((3, 2)))
    with pytest.raises(IRTDataError, match="2 ids but 3 embedding rows"):
        load_embeddings(p)
    with open(p, "wb") as fh:
        np.savez(fh, ids=np.array(["a"]))
    with pytest.raises(IRTDataError, match="missing array 'embeddings'"):
        load_embeddings(p)
    p.write_text("not a zip")
    with pytest.raises(IRTDataError, match=r"E\.npz: not a readable \.npz"):
        load_embeddings(p)


def test_records_api_names_the_record():
    with pytest.raises(IRTDataError, match=r"^responses\[1\]: unknown query_id 'x'"):
        FitData.from_records(
            [{"id": "q1", "text": "t"}],
            [{"id": "a1", "type": "ai"}],
            [{"query_id": "q1", "agent_id": "a1", "ruling": 1}, {"query_id": "x", "agent_id": "a1", "ruling": 1}],
        )
    with pytest.raises(IRTDataError, match=r"^responses: empty"):
        FitData.from_records([{"id": "q1", "text": "t"}], [{"id": "a1"}], [])


def test_cli_reports_bad_input_and_exits_2(tiny, capsys):
    d, q, a = tiny
    r = _responses(d, [{"query_id": "q1", "agent_id": "a1", "ruling": 1}, {"query_id": "q1", "agent_id": "a1", "ruling": 3}])
    rc = main(["fit", "--queries", str(q), "--agents", str(a), "--responses", str(r), "--out", str(d / "fit"),
               "--model", "1pl", "--no-progress"])
    assert rc == 2
    err = capsys.readouterr().err
    assert f"error: {r}:2: ruling must be 0 or 1, got 3" in err
    assert not (d / "fit").exists()


def test_cli_predict_unknown_agent(files, tmp_path, capsys):
    out = tmp_path / "fit"
    assert main(["fit", "--queries", str(files["queries"]), "--agents", str(files["agents"]),
                 "--responses", str(files["responses"]), "--out", str(out), "--model", "1pl",
                 "--epochs", "5", "--no-progress"]) == 0
    pairs = write_jsonl(tmp_path / "p.jsonl", [{"query_id": "q1", "agent_id": "a1"}, {"query_id": "q1", "agent_id": "ghost"}])
    rc = main(["predict", "--fit", str(out), "--queries", str(files["queries"]), "--pairs", str(pairs),
               "--out", str(tmp_path / "o.jsonl")])
    assert rc == 2
    assert f"{pairs}:2: unknown agent_id 'ghost'" in capsys.readouterr().err
    json.loads((out / "metrics.json").read_text())  # the fit itself is intact
