"""Turning user tables (numpy arrays or pandas frames) into DEN's numeric covariates and labels.

Numbers stay numbers; booleans become 0/1 (a query's "True"/"false" text too); dates and times
become days since 1970-01-01 (durations: days), whatever their unit: datetime columns,
``datetime.date`` values and text in ISO 8601 form (2021-01-31, 2021-01-31 10:00, as CSV files
hold dates; a query's dates in another form, 13/09/2021, are read by one convention per column,
``_other_dates``). Strings and categories become integer codes in sorted order of the values
seen when fitting (numbers written as text in numeric order, ``pd.cut``'s intervals by
position), whatever order a pandas categorical declares (OpenML's nominal columns come as
ordered categoricals whose order means nothing); an unseen value becomes missing, and a value
of another type is found by its text (one CSV file gives "1" or "1.0", another 1). Missing
values (None, NaN, NaT, pandas NA) become NaN, which the calibration imputes, as does
everything in a column that held no value when fitting; so do the texts of ``MISSING_MARKERS``
("?", "-", "NA", ...) in a column of numbers or dates, where one "?" would otherwise make the
column categories. A column of numbers with a few cells of other text (at least
``NUMERIC_SHARE`` of its values numbers: "pending" among lab values) stays numbers, that text
missing, with a ``DENInputWarning`` naming the column (so is a query's word among numbers where
the support column had none, up to the same share); a bound reads as its number ("<0.5" as 0.5,
"3+" as 3, as detection limits and top-coded counts are written); a query category the support
set did not hold is missing too, with a warning where a column has many. Features are float64,
so a large offset (dates, YYYYMMDD codes, epoch milliseconds) keeps its resolution until the
keypoints map it onto [0, 1] (a pre-training ``Task`` holds float32). Infinite values, values
beyond float32 range, complex numbers and values that are neither strings, booleans nor numbers
(a dict) are errors that name the column; sparse matrices are an error (DEN needs dense input).
"""

from __future__ import annotations

import codecs
import contextlib
import datetime
import re
import shlex
import warnings

import numpy as np
import pandas as pd

from den.errors import DENInputError, DENInputWarning

# The largest magnitude a pre-training task's float32 features (``den.data.tasks.Task``) hold;
# beyond it a value would become infinite there, so no table may hold one.
FLOAT32_MAX = float(np.finfo(np.float32).max)

# Texts that stand for "no value" in a column of numbers or dates (spreadsheets and UCI files
# write "?"), compared stripped and in lower case.
MISSING_MARKERS = frozenset({"", "?", "-", "--", ".", "na", "n/a", "nan", "null", "none", "missing"})

# A number written with a currency, a percent sign or grouped digits that no reading of the
# file turned into a number ("3,816" in a ',' file, "10%", "€1,234", "1 234,5"): such a column
# is categories, which ``TabularEncoder.fit`` says.
_WRITTEN_NUMBER = re.compile(r"(?:[€$£¥]\s*)?[+-]?(?:\d{1,3}(?:[ ,.'\u00a0\u202f]\d{3})+(?:[.,]\d+)?"
                             r"|\d+(?:[.,]\d+)?)\s*(?:%|[€$£¥])?")

# Labels that mean "no label" (UCI files write "?"), beside empty cells, NaN and None; a class
# named "-" or "none" stays a class ("+"/"-" labels are common).
MISSING_LABELS = frozenset({"?", ""})

# A column whose values are at least this share numbers (the rest text other than
# MISSING_MARKERS or bounds) is numeric, its text missing: "pending" in a tenth of the cells of
# a lab value would otherwise make the column categories and every unseen query number missing.
NUMERIC_SHARE = 0.9
# A query column warns where at least this share of its values are categories the support set
# did not hold (each of them missing).
UNSEEN_WARNING_SHARE = 0.1
# A text column with another value in each of at least this many support rows is named at fit
# as a likely identifier or free text (read as that many categories, which says nothing).
IDENTIFIER_MIN_ROWS = 20
# Messages cut a listed text after this many characters (a sentence, a paragraph of free text).
LISTED_CHARACTERS = 40

# A number written as a bound: "<0.5", "> 100", "<=3", "≥ 2" (a detection limit) or "3+" (a count).
_BOUND = re.compile(r"(?:<=?|>=?|≤|≥)\s*([-+]?[\d.]+(?:[eE][-+]?\d+)?)|([-+]?[\d.]+(?:[eE][-+]?\d+)?)\s*\+")

# A date (and time) as ISO 8601 text, the form CSV files and pandas write dates in.
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?")


class FeatureCountError(DENInputError):
    """Query features with another number of columns than the support set had."""

    def __init__(self, message: str, given: int, expected: int):
        super().__init__(message)
        self.given = given
        self.expected = expected


class CellTypeError(DENInputError, TypeError):
    """A feature value DEN cannot encode (not a string, boolean or number: a dict, a list);
    a TypeError too, as Python's ``float({})`` raises."""


def _cell_type_error(what: str, name: str, value) -> CellTypeError:
    return CellTypeError(f"{what} column {name!r}: argument must be a string, a boolean or a "
                         f"number (None or NaN when missing), not the {type(value).__name__} "
                         f"{value!r}")


def _unhashable(series: pd.Series) -> list:
    """The values of ``series`` that cannot be categories (unhashable: a dict, a list)."""
    bad = []
    for v in series:
        try:
            hash(v)
        except TypeError:
            bad.append(v)
    return bad


def as_pandas(x):
    """``x`` as a pandas DataFrame where it is a table of named columns from another library (a
    pyarrow Table, a polars DataFrame: anything with ``to_pandas`` or the dataframe interchange
    protocol's ``__dataframe__``), so that its columns are matched by name as a pandas frame's
    are; anything else (pandas, numpy, lists) as it is."""
    if isinstance(x, (pd.DataFrame, pd.Series, np.ndarray)):
        return x
    if callable(getattr(x, "to_pandas", None)) and hasattr(x, "__dataframe__"):
        try:
            return x.to_pandas()
        except ImportError:  # polars' to_pandas needs pyarrow; the interchange protocol does not
            pass
    if hasattr(x, "__dataframe__"):
        return pd.api.interchange.from_dataframe(x)
    return x


def _as_frame(x, what: str) -> pd.DataFrame:
    """``x`` (pandas, or an array or list; another library's table has been ``as_pandas``'d by
    the caller) as a pandas frame, columns x0, x1, ... for an array."""
    import scipy.sparse

    if scipy.sparse.issparse(x):
        raise DENInputError(f"{what} is a scipy.sparse {type(x).__name__}; DEN needs dense input: "
                            f"pass x.toarray() (or a pandas DataFrame); in a Pipeline, have the step "
                            f"before DEN return dense arrays (OneHotEncoder(sparse_output=False), "
                            f"ColumnTransformer(..., sparse_threshold=0))")
    if isinstance(x, (pd.DataFrame, pd.Series)):
        return _plain_columns(x.to_frame() if isinstance(x, pd.Series) else x)
    if isinstance(x, dict) or (isinstance(x, (list, tuple)) and x and all(isinstance(r, dict) for r in x)):
        kind = "a dict of columns" if isinstance(x, dict) else "a list of dicts (records)"
        raise DENInputError(f"{what} is {kind}; give a table: pd.DataFrame(X) makes one, its columns "
                            f"named by the keys")
    arr = np.asarray(x)
    if arr.ndim == 1:
        raise DENInputError(f"{what} must be 2-d (rows x features), got a 1-d array of "
                            f"{arr.shape[0]} values; Reshape your data with x.reshape(-1, 1) for "
                            f"one feature (or x.reshape(1, -1) for one row)")
    if arr.ndim != 2:
        raise DENInputError(f"{what} must be 2-d (rows x features), got shape {arr.shape}")
    return _plain_columns(pd.DataFrame(arr.astype(object) if arr.dtype.kind == "S" else arr,
                                       columns=[f"x{j}" for j in range(arr.shape[1])]))


def _plain_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the columns that pandas' numeric and date checks misread in kinds they
    know: pyarrow text (``read_csv(dtype_backend="pyarrow")``, whose failed number reading is
    NaN rather than missing, so that every word looked like a number) as pandas strings, and
    periods (whose missing value is the integer -2**63) as the timestamps they start at."""
    plain = {}
    for j in range(frame.shape[1]):
        column, dtype = frame.iloc[:, j], frame.dtypes.iloc[j]
        if pd.api.types.is_object_dtype(dtype) and _holds_bytes(column):  # scipy.io.arff nominal columns
            plain[j] = column.map(_decoded, na_action="ignore")
        elif isinstance(dtype, pd.PeriodDtype):
            plain[j] = column.dt.to_timestamp()
        elif isinstance(dtype, pd.ArrowDtype) and _arrow_text(dtype.pyarrow_dtype):
            plain[j] = column.astype("string")
    if not plain:
        return frame
    frame = frame.copy()
    for j, column in plain.items():
        frame.isetitem(j, column)
    return frame


def _holds_bytes(column: pd.Series) -> bool:
    """Whether an object column holds bytes values (all, or beside texts)."""
    kind = pd.api.types.infer_dtype(column, skipna=True)
    return kind == "bytes" or (kind.startswith("mixed") and
                               bool(column.map(lambda v: isinstance(v, bytes)).any()))


def _decoded(value):
    """A bytes cell as text (UTF-8, else Latin-1, which reads any bytes); other cells as they are."""
    if not isinstance(value, bytes):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


def _arrow_text(kind) -> bool:
    """Whether pyarrow type ``kind`` holds text: strings, or a dictionary of strings."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    view = getattr(pa.types, "is_string_view", lambda kind: False)  # pyarrow >= 16
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or view(kind)


def _is_numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def _is_marker(v) -> bool:
    """Whether ``v`` is text that means a missing value (``MISSING_MARKERS``)."""
    return isinstance(v, str) and v.strip().lower() in MISSING_MARKERS


def _without_markers(series: pd.Series) -> pd.Series:
    """``series`` with its ``MISSING_MARKERS`` texts as missing (a column of numbers or dates)."""
    if _is_numeric(series) or _temporal_kind(series) or pd.api.types.is_bool_dtype(series):
        return series
    try:  # vectorised: a value that is not text is no marker (its .str result is missing)
        marked = series.str.strip().str.lower().isin(MISSING_MARKERS)
    except AttributeError:  # no text at all (dates, Decimals): no marker either
        return series
    return series.mask(np.asarray(marked, dtype=bool))


def _numeric_cell(v):
    """A cell of a numeric column as ``pd.to_numeric`` takes it: a boolean as 0/1, a missing
    marker ("?") as NaN, a bound ("<0.5", ">= 100", "3+") as its number, anything else as it
    is."""
    if isinstance(v, (bool, np.bool_)):
        return float(v)
    if _is_marker(v):
        return np.nan
    bound = _bound(v)
    return v if bound is None else bound


# How a query's text writes a boolean in a column the support set held as booleans (JSON
# payloads and frames read with dtype=str write True as "True" or "true").
_BOOLEAN_TEXTS = {"true": 1.0, "false": 0.0}


def _boolean_cell(v):
    """A cell of a column of booleans: "True"/"false" (any case) as 1/0, else as
    ``_numeric_cell`` takes it (True, 1, "1", a missing marker)."""
    if isinstance(v, str) and (value := _BOOLEAN_TEXTS.get(v.strip().lower())) is not None:
        return value
    return _numeric_cell(v)


def _bound(v) -> float | None:
    """The number of text that writes a bound, as lab values and counts do ("<0.5", ">=100",
    "≤ 3", "3+"), else None. A column is numbers, its bounds included, where at least half of
    its values are plain numbers; a column of bands ("<=50", ">50") is categories."""
    if isinstance(v, str) and (match := _BOUND.fullmatch(v.strip())):
        return _number(match[1] or match[2])
    return None


def _is_date(v) -> bool:
    """A date or time: a ``datetime.date`` / ``datetime`` / Timestamp / numpy datetime64
    value, or text in ISO 8601 form."""
    if isinstance(v, (datetime.date, np.datetime64)):
        return True
    return isinstance(v, str) and _ISO_DATE.fullmatch(v.strip()) is not None


def _parse_dates(series: pd.Series, where: str = "") -> pd.Series:
    """Dates (UTC) of ``series``: ISO 8601 text and date objects, other text by one convention
    for the whole column (``_other_dates``); NaT where a value is no date or beyond pandas'
    range. ``where`` names the column in a warning about dates that read both ways."""
    if _temporal_kind(series):
        return pd.to_datetime(series, utc=True)
    index, series = series.index, series.reset_index(drop=True)  # positions: an index may repeat
    parsed = pd.to_datetime(series, utc=True, errors="coerce", format="ISO8601")
    failed = (series.notna() & parsed.isna()).to_numpy()
    if failed.any():
        other = _other_dates(series[failed].astype(str), where)  # indexed by the failed positions
        parsed = parsed.mask(failed, other)  # aligned on the index; the dtype stays a date's
    parsed.index = index
    return parsed


# A date written with numbers only, day and month in either order: 11/07/2021, 13.09.21.
_NUMERIC_DATE = re.compile(r"\s*(\d{1,2})[/.-](\d{1,2})[/.-]\d{2,4}(?:\s.*)?")


def _other_dates(texts: pd.Series, where: str) -> pd.Series:
    """Dates (UTC) written otherwise than ISO 8601 (11/07/2021, 13.09.2021, Jul 11 2021), each
    read as pandas reads it value by value, but with one convention for the whole column:
    day first where some date can only be read so (13/09/2021), else month first, as pandas
    reads 11/07/2021 (7 November). Value by value alone, 11/07 and 13/09 in one column would be
    read by two conventions. Where only the convention decides (every number-only date has day
    and month <= 12) and it changes a date, a warning names the column (``where``) and the ISO
    form, which reads one way only."""
    numbers = texts.str.extract(_NUMERIC_DATE).astype(float)
    day_over_12, month_over_12 = bool((numbers[0] > 12).any()), bool((numbers[1] > 12).any())
    day_first = day_over_12 and not month_over_12
    with warnings.catch_warnings():  # "parsing dates in %d/%m/%Y format when dayfirst=False was specified"
        warnings.simplefilter("ignore", UserWarning)
        parsed = pd.to_datetime(texts, utc=True, errors="coerce", format="mixed", dayfirst=day_first)
        if not where or day_over_12 or month_over_12:  # some date decides the convention: no doubt
            return parsed
        other = pd.to_datetime(texts, utc=True, errors="coerce", format="mixed", dayfirst=True)
    changed = parsed.notna() & other.notna() & (parsed != other)
    if changed.any():
        example = texts[changed].iloc[0]
        warnings.warn(f"{where}: dates such as {example!r} read month first "
                      f"({parsed[changed].iloc[0]:%Y-%m-%d}); if the day comes first, write them as "
                      f"ISO 8601 (YYYY-MM-DD), which reads one way only", DENInputWarning, stacklevel=5)
    return parsed


def _temporal_kind(col: pd.Series) -> str | None:
    """"datetime" or "timedelta" for a column of dates/times or durations, else None."""
    if pd.api.types.is_datetime64_any_dtype(col):
        return "datetime"
    if pd.api.types.is_timedelta64_dtype(col):
        return "timedelta"
    return None


def _days(series: pd.Series, kind: str, what: str, name: str) -> np.ndarray:
    """(n,) float64 days since 1970-01-01 (kind "datetime", time zones read as UTC) or days
    (kind "timedelta"), NaN where missing; a value that is not a date (duration) is an error."""
    series = _without_markers(series)
    if kind == "datetime":
        seconds = _parse_dates(series, f"{what} column {name!r}").dt.as_unit("s")  # years 1-9999
        days = (seconds - pd.Timestamp(0, tz="UTC").as_unit("s")) / pd.Timedelta(days=1)
    else:
        days = pd.to_timedelta(series, errors="coerce") / pd.Timedelta(days=1)
    values = days.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = series.notna().to_numpy() & np.isnan(values)
    if bad.any():
        expected = "a date" if kind == "datetime" else "a duration"
        raise DENInputError(f"{what} column {name!r} has {series[bad].iloc[0]!r} where the support "
                            f"set had {expected}")
    return values


class TabularEncoder:
    """Maps a table's columns to float64 features, remembering how (fit on the support set).

    Attributes (after ``fit``):
        columns: column names in order ("x0", "x1", ... for arrays).
        categories: for each non-numeric column, the sorted values seen, by column name.
        temporal: "datetime" or "timedelta" for each column of dates or durations, by name.
        empty: the columns with no value in the support set (all missing); whatever a query
            holds there is missing too, as nothing says how to read it.
        stray_text: the numeric columns with some cells of text (``NUMERIC_SHARE``), by name,
            with the texts the support set held there; text there is missing, in any table
            (bounds such as "<0.5" or "3+" are numbers in every numeric column).
        boolean: the columns the support set held as booleans (0/1); a query's "True" and
            "false" there read as 1 and 0.
    """

    def __init__(self):
        self.columns: list[str] | None = None
        self.categories: dict[str, list] = {}
        self.temporal: dict[str, str] = {}
        self.empty: set[str] = set()
        self.stray_text: dict[str, list[str]] = {}
        self.boolean: set[str] = set()
        self.warned: set[tuple[str, str, frozenset]] = set()  # (column, kind, values) warned about
        self._from_array = False

    def fit(self, x, what: str = "support features") -> TabularEncoder:
        x = as_pandas(x)
        frame = _as_frame(x, what)
        self._from_array = not isinstance(x, (pd.DataFrame, pd.Series))
        if frame.shape[1] == 0:
            raise DENInputError(f"{what} has no feature columns: 0 feature(s) (shape={frame.shape}) "
                                f"while a minimum of 1 is required; give at least one feature column")
        self.columns = [_nfc(str(c)) for c in frame.columns]
        _check_unique(self.columns, what)
        self.categories, self.temporal, self.empty, self.stray_text = {}, {}, set(), {}
        self.boolean = set()
        self.warned = set()
        for j, name in enumerate(self.columns):
            series = frame.iloc[:, j]
            if not series.notna().any():
                self.empty.add(name)
                continue
            if kind := _temporal_kind(series):
                self.temporal[name] = kind
                continue
            if _is_numeric(series):
                continue
            if pd.api.types.is_bool_dtype(series):
                self.boolean.add(name)
                continue
            given = _without_markers(series).dropna()
            if given.empty:  # nothing but "?" and the like
                self.empty.add(name)
                continue
            bound = given.map(_bound).notna()
            numbers = pd.to_numeric(given.mask(bound).map(_numeric_cell), errors="coerce").notna()
            if numbers.mean() >= 0.5:  # bounds count beside plain numbers; bands ("<=50", ">50",
                numbers |= bound       # "18+") alone are categories
            if numbers.all():
                continue  # numbers stored as objects/strings ("?" and the like missing)
            if all(_is_date(v) for v in given) and _parse_dates(given).notna().all():
                self.temporal[name] = "datetime"  # dates as text (a CSV file) or date objects
                continue
            texts = given[~numbers.to_numpy()]
            if numbers.mean() >= NUMERIC_SHARE and all(isinstance(v, str) for v in texts):
                # numbers with a few cells of other text
                self.stray_text[name] = sorted({str(v) for v in texts})
                warnings.warn(f"{what} column {name!r}: {len(texts)} of {len(given)} values are text "
                              f"among numbers ({_listed(self.stray_text[name])}); they are read as "
                              f"missing values. "
                              f"To keep what they say, write them as numbers; to silence this, "
                              f"write them as '?'", DENInputWarning, stacklevel=3)
                continue
            try:
                values = list(dict.fromkeys(_nfc(v) for v in series.dropna().unique().tolist()))
            except TypeError as err:
                bad = _unhashable(series)
                if not bad:
                    raise
                raise _cell_type_error(what, name, bad[0]) from err
            if all(isinstance(v, (bool, np.bool_)) for v in values):
                self.boolean.add(name)  # booleans with missing cells (an object column)
                continue
            self.categories[name] = sorted(values, key=_category_key)
            if all(isinstance(v, str) and _WRITTEN_NUMBER.fullmatch(v.strip()) for v in values):
                examples = _listed(sorted(values, key=str)[:3])
                warnings.warn(f"{what} column {name!r}: its values are numbers written with a unit "
                              f"or grouping ({examples}), read as {len(values)} categories, without "
                              f"their order; to use the numbers, write them plain (3816, not 3,816 or "
                              f"$3,816; 10, not 10%)",
                              DENInputWarning, stacklevel=3)
            elif len(values) == len(given) >= IDENTIFIER_MIN_ROWS and all(isinstance(v, str) for v in values):
                warnings.warn(f"{what} column {name!r}: each of its {len(values)} values is another "
                              f"text ({_listed(values)}): an identifier or free text? It is read as "
                              f"{len(values)} categories in alphabetical order, and a query's other "
                              f"texts as missing; if it says nothing of the class, leave it out (den "
                              f"predict --ignore-columns {shlex.quote(name)}; with DENClassifier, drop the "
                              f"column)",
                              DENInputWarning, stacklevel=3)
        return self

    def transform(self, x, what: str = "query features") -> np.ndarray:
        """(n, d) float64 features, NaN where missing or an unseen category.

        Raises:
            DENInputError: columns differ from the fitted ones, a value is infinite, beyond
                float32 range or complex, or the input is a sparse matrix.
        """
        if self.columns is None:
            raise RuntimeError("TabularEncoder.transform called before fit")
        if isinstance(x, pd.Series) and len(self.columns) > 1 and \
                [str(c) for c in x.index] == self.columns:  # frame.iloc[0]: one row, not a column
            raise DENInputError(f"{what} is a pandas Series whose index is the {len(self.columns)} "
                                f"feature names: one row (frame.iloc[0]); give it as a one-row "
                                f"DataFrame, frame.iloc[[0]] (or series.to_frame().T)")
        x = as_pandas(x)
        frame = _as_frame(x, what)
        given = [_nfc(str(c)) for c in frame.columns]
        _check_unique(given, what)
        if isinstance(x, pd.DataFrame) and not self._from_array:
            missing = [c for c in self.columns if c not in given]
            extra = [c for c in given if c not in self.columns]
            if missing or extra:
                raise DENInputError(f"{what} columns differ from the support set's: missing "
                                    f"{missing}, unexpected {extra}; give the support's columns, "
                                    f"in any order (X[columns] leaves others out; a column of NaN, "
                                    f"missing values, stands for one you do not have)")
            if given != self.columns:  # a copy of a large query only where its order differs
                frame = frame[[frame.columns[given.index(c)] for c in self.columns]]
        elif frame.shape[1] != len(self.columns):
            raise FeatureCountError(f"{what} has {frame.shape[1]} columns but the support set had "
                                    f"{len(self.columns)}", frame.shape[1], len(self.columns))
        out = np.empty(frame.shape, dtype=np.float64)
        warned = self.__dict__.setdefault("warned", set())  # encoders pickled before it had none
        temporal = getattr(self, "temporal", {})  # encoders pickled before these were read
        empty = getattr(self, "empty", set())
        stray_text = getattr(self, "stray_text", {})
        boolean = getattr(self, "boolean", set())
        for j, name in enumerate(self.columns):
            series = frame.iloc[:, j]
            if name in empty:
                out[:, j] = np.nan
            elif name in temporal:
                out[:, j] = _days(series, temporal[name], what, name)
            elif name in self.categories:
                lookup = {v: float(i) for i, v in enumerate(self.categories[name])}
                texts = _text_lookup(self.categories[name])
                values = series.map(lambda v, lookup=lookup, texts=texts, name=name:
                                    _category_code(v, lookup, texts, what, name))
                out[:, j] = values.to_numpy(dtype=np.float64)
                _warn_unseen(series, out[:, j], self.categories[name], what, name, warned)
            else:
                if not _is_numeric(series):  # one pass: booleans as 0/1, "?" and the like missing
                    series = series.map(_boolean_cell if name in boolean else _numeric_cell)
                numeric = pd.to_numeric(series, errors="coerce")
                if pd.api.types.is_complex_dtype(numeric) or (
                        numeric.dtype == object and any(isinstance(v, complex) for v in numeric)):
                    raise DENInputError(f"{what} column {name!r} has complex numbers (Complex data not "
                                        f"supported); DEN needs real numbers: pass their real part or "
                                        f"magnitude (or both as two columns)")
                values = numeric.to_numpy(dtype=np.float64, na_value=np.nan)
                bad = series.notna().to_numpy() & np.isnan(values)
                if name in stray_text:
                    _warn_text(series, bad, what, name, warned)
                elif bad.any() and bad.sum() > (1 - NUMERIC_SHARE) * series.notna().sum():
                    if name in boolean:
                        raise DENInputError(f"{what} column {name!r} has value {series[bad].iloc[0]!r} "
                                            f"in a column the support set held as booleans; give "
                                            f"True or False (or 1 or 0) there, or leave the cell "
                                            f"empty (missing)")
                    raise DENInputError(f"{what} column {name!r} has non-numeric value "
                                        f"{series[bad].iloc[0]!r} in a numeric column; give a "
                                        f"number there, or leave the cell empty (missing)")
                elif bad.any():  # a few words among numbers, as the support set may hold them
                    words = list(dict.fromkeys(str(v) for v in series[bad]))
                    key = (name, "text where the support had numbers", frozenset(words))
                    if key not in warned:  # e.g. rows given to the fit as unlabeled, then predicted
                        warned.add(key)
                        warnings.warn(f"{what} column {name!r}: {bad.sum()} of {series.notna().sum()} "
                                      f"values are text in a column of numbers ({_listed(words)}), read "
                                      f"as missing; the support set had numbers only there",
                                      DENInputWarning, stacklevel=3)
                if np.isinf(values).any():
                    raise DENInputError(f"{what} column {name!r} has infinite values; replace them "
                                        f"by NaN (missing) or finite numbers")
                huge = np.abs(values) > FLOAT32_MAX
                if huge.any():
                    raise DENInputError(f"{what} column {name!r} has values beyond float32 range "
                                        f"(e.g. {values[huge][0]:g}; the limit is {FLOAT32_MAX:.3g}); "
                                        f"rescale the column (e.g. divide it by a power of ten) or "
                                        f"replace them by NaN (missing)")
                out[:, j] = values
        return out

    def fit_transform(self, x, what: str = "support features") -> np.ndarray:
        return self.fit(x, what).transform(x, what)


def encode_query(encoder: TabularEncoder, X, estimator: str = "DENClassifier",
                 query_name: str = "query") -> np.ndarray:
    """The query table X as the fitted ``encoder``'s features, (m, d) float64; warnings and
    errors about its values name it ``query_name``.

    Raises:
        DENInputError: another number of columns than the support table had (in
            scikit-learn's words, naming ``estimator``), or a value the encoder cannot take.
    """
    try:
        return encoder.transform(X, f"{query_name} features")
    except FeatureCountError as err:  # in scikit-learn's words too
        raise DENInputError(f"X has {err.given} features, but {estimator} is expecting "
                            f"{err.expected} features as input: {err}") from None


def _listed(values: list) -> str:
    """The first three of ``values`` as a message lists them: 'a', 'b', 'c', ...; a text longer
    than ``LISTED_CHARACTERS`` cut there ('a sentence th...')."""
    def shown(v) -> str:
        return repr(v[:LISTED_CHARACTERS] + "...") if isinstance(v, str) and len(v) > LISTED_CHARACTERS \
            else repr(v)

    return ", ".join(shown(v) for v in values[:3]) + (", ..." if len(values) > 3 else "")


def _warn_missing(series: pd.Series, lost: np.ndarray, given: np.ndarray, what: str, name: str,
                  kind: str, hint=lambda values: "", warned: set | None = None) -> None:
    """Warn where ``UNSEEN_WARNING_SHARE`` or more of a column's ``given`` values are ``lost``
    (read as missing), naming the column, the share, a few of the values and what they are
    (``kind``), then ``hint(values)`` (the lost values' texts, once each). ``warned`` (an
    encoder's) holds (column, kind, values) said already: e.g. rows given to the fit as
    unlabeled and then predicted are not warned about twice."""
    if not lost.any() or lost.sum() < UNSEEN_WARNING_SHARE * given.sum():
        return
    values = list(dict.fromkeys(str(v) for v in series[lost]))
    if warned is not None:  # a hash, not the values: a million free texts are not kept
        key = (name, kind, hash(frozenset(values)))
        if key in warned:
            return
        warned.add(key)
    warnings.warn(f"{what} column {name!r}: {lost.sum()} of {given.sum()} values are {kind} "
                  f"({_listed(values)}), read as missing{hint(values)}", DENInputWarning, stacklevel=4)


def _warn_text(series: pd.Series, text: np.ndarray, what: str, name: str, warned: set | None = None) -> None:
    """Warn where many of a numeric column's given values are text (``text``: the cells read
    as missing), as ``_warn_unseen`` does for categories."""
    _warn_missing(series, text, series.notna().to_numpy(), what, name, "text in a column of numbers",
                  warned=warned)


def _warn_unseen(series: pd.Series, codes: np.ndarray, categories: list, what: str, name: str,
                 warned: set | None = None) -> None:
    """Warn where many of a column's given values are categories the support set did not hold
    (``codes`` NaN where ``series`` has a value), naming a few and any that match a known
    category apart from case and spaces ('RED' for 'red')."""
    given = _without_markers(series).notna().to_numpy()
    known = {str(c).strip().lower(): str(c) for c in categories}

    def near(values: list[str]) -> str:
        alike = [f"{v!r} for {known[v.strip().lower()]!r}" for v in values if v.strip().lower() in known]
        return f"; some differ from a support category only in case or spaces ({', '.join(alike[:3])})" \
            if alike else ""

    _warn_missing(series, given & np.isnan(codes), given, what, name,
                  "categories the support set did not have", near, warned)


def _check_unique(columns: list[str], what: str) -> None:
    """Raise if a column name occurs twice: which column a value belongs to would be a guess."""
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise DENInputError(f"{what} has more than one column named {', '.join(map(repr, twice))}; "
                            f"give each column its own name")


def _number(v) -> float | None:
    """The finite number that the text ``v`` writes ("12", " 1.50 ", "1e3"), else None."""
    if not isinstance(v, str):
        return None
    try:
        number = float(v)
    except ValueError:
        return None
    return number if np.isfinite(number) else None


def _category_key(v) -> tuple:
    """Sort key of a category: by type, numbers (and numbers written as text) by their value
    (2 before 10, "2" before "10": the order of a column of 1, 2, 10 and "a" does not depend on
    whether its numbers came as numbers or as a CSV file's text), intervals (``pd.cut``'s bins)
    by their position on the line (their left end, then their right), other values by their
    text."""
    if isinstance(v, pd.Interval):
        try:
            return (str(type(v)), False, float(v.left), float(v.right), str(v))
        except (TypeError, ValueError):  # bins of dates: their text, as before
            pass
    number = _number(v)
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)):
        try:
            number = float(v) if np.isfinite(float(v)) else None
        except OverflowError:  # an int beyond float range (10**400): by its text
            number = None
    return (str(type(v)), number is None, 0.0 if number is None else number, 0.0, str(v))


def _category_code(v, lookup: dict, texts: tuple[dict, dict], what: str, name: str) -> float:
    """The code of category ``v``: by value (``lookup``; a text with accents in their composed
    form, ``_nfc``, as the fitted categories hold them), else by its text as a CSV file holds
    it (1 for "1"), else by the number its text writes (12.0 for "12.0" or "12"), each only
    where one category reads so (``_text_lookup``), else NaN (unseen)."""
    if _isna(v):
        return np.nan
    try:
        code = lookup.get(v)
    except TypeError as err:  # unhashable (a dict, a list)
        raise _cell_type_error(what, name, v) from err
    if code is not None:
        return code
    if (composed := _nfc(v)) is not v:  # only a miss pays: e + a combining accent for é
        v = composed
        if (code := lookup.get(v)) is not None:
            return code
    for numeric, text in zip((False, True), texts):
        if (code := text.get(_text(v, numeric))) is not None:
            return code
    return np.nan


def _text(v, numeric: bool = False) -> str:
    """How a category reads in a CSV file: 1, 1.0 and "1" read "1"; with ``numeric``, text
    that writes a number reads as that number too ("1.0" and "01" read "1")."""
    if numeric and (number := _number(v)) is not None:
        v = number
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _text_lookup(categories: list) -> tuple[dict[str, float], dict[str, float]]:
    """Code by text of each category whose text no other category shares: as written, and as
    the number it writes (``_text``)."""
    import collections

    lookups = []
    for numeric in (False, True):
        texts = [_text(v, numeric) for v in categories]
        counts = collections.Counter(texts)
        lookups.append({t: float(i) for i, t in enumerate(texts) if counts[t] == 1})
    return lookups[0], lookups[1]


def _nfc(v):
    """A text in Unicode's composed form (NFC), as ``read_table`` reads a file: "café" typed
    with a combining accent (as macOS writes it) is the same name or category as "café";
    anything else as it is."""
    if isinstance(v, str) and not v.isascii():
        import unicodedata

        return unicodedata.normalize("NFC", v)
    return v


def _isna(v) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _texts_numpy_would_rewrite(labels: list | tuple) -> bool:
    """Whether ``np.asarray`` would rewrite a list's labels as texts that are not theirs: a
    list holding texts (or bytes) beside missing values (NaN would become the class "nan"),
    numbers (1 and "1": one class), bytes (decoded as ASCII, or a UnicodeDecodeError) or
    other objects; or members of a ``(str, Enum)`` (numpy writes their names cut to the
    array's width). Such a list is kept as Python objects."""
    import enum

    kinds = set()
    for v in labels:
        if isinstance(v, enum.Enum) and isinstance(v, str):
            return True
        kinds.add("text" if isinstance(v, str) else "bytes" if isinstance(v, bytes) else
                  "missing" if _isna(v) else "other")
    return bool(kinds & {"text", "bytes"}) and len(kinds) > 1


def encode_labels(y, what: str = "support labels") -> tuple[np.ndarray, np.ndarray]:
    """Labels of any type to 0..L-1.

    Returns:
        (codes (n,) int32, classes (L,) the original values in sorted order).

    Raises:
        DENInputError: missing, infinite or complex labels, continuous ones (floats not all
            whole numbers: a regression target), labels of types that cannot be sorted
            together (0 and "a"; a list that mixes numbers and texts, 1 and "1", as a pandas
            column of them does; texts and bytes), a 2-d label array or a sparse matrix. A
            list's labels are never rewritten as texts (``_texts_numpy_would_rewrite``): a
            missing one among texts is named as missing, and members of an Enum stay members.
    """
    import scipy.sparse

    if scipy.sparse.issparse(y):
        raise DENInputError(f"{what} are a scipy.sparse {type(y).__name__}; DEN needs dense input: "
                            f"pass y.toarray().ravel()")
    if isinstance(y, (list, tuple)) and _texts_numpy_would_rewrite(y):
        arr = np.empty(len(y), dtype=object)  # each label as given: checked and sorted below
        arr[:] = y
    else:
        arr = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise DENInputError(f"{what} must be 1-d, got shape {arr.shape}")
    if np.iscomplexobj(arr) or (arr.dtype == object and any(isinstance(v, complex) for v in arr)):
        raise DENInputError(f"{what} has complex numbers (Complex data not supported); give class "
                            f"labels (integers or strings)")
    missing = pd.isna(arr)
    unknown = np.zeros(arr.shape, dtype=bool)
    if arr.dtype.kind in "OUS":  # strings (or bytes): "?" is no label
        texts = [v.decode("latin-1") if isinstance(v, bytes) else v for v in arr]
        unknown = np.array([isinstance(v, str) and v.strip() in MISSING_LABELS for v in texts], dtype=bool)
    if (missing | unknown).any():
        rows = np.flatnonzero(missing | unknown)
        shown = ", ".join(map(str, rows[:5])) + (", ..." if len(rows) > 5 else "")
        marker = " (empty, NaN or '?')" if unknown.any() else ""
        raise DENInputError(f"{what}: {len(rows)} row(s) have no label{marker}: row(s) {shown} "
                            f"(counted from 0); drop them, as a row without a label cannot be "
                            f"learnt from")
    _refuse_unscorable_labels(arr, what)
    if arr.dtype.kind == "f":
        infinite = arr[np.isinf(arr)].tolist()
    else:
        infinite = [v for v in arr if isinstance(v, (float, np.floating)) and np.isinf(v)]
    if infinite:
        raise DENInputError(f"{what} has infinite values ({infinite[0]}); give class labels "
                            f"(integers or strings)")
    try:
        classes, codes = np.unique(arr, return_inverse=True)
    except TypeError as err:  # e.g. 0 and "a": numpy cannot order them
        types = sorted({type(v).__name__ for v in arr})
        if len(types) == 1:  # e.g. members of an enum.Enum
            raise DENInputError(f"{what} are {types[0]} values, which cannot be sorted into "
                                f"classes; give labels as integers or strings (e.g. "
                                f"[str(v) for v in y])") from err
        raise DENInputError(f"{what} mix types ({', '.join(types)}) that cannot be sorted into "
                            f"classes; give labels of one type, e.g. all strings "
                            f"(y.astype(str))") from err
    if classes.dtype.kind == "f":
        fractional = classes[classes != np.floor(classes)]
        if len(fractional):
            raise DENInputError(f"{what} has continuous values ({fractional[0]:g} is not a whole "
                                f"number): DEN is a classifier; give class labels (integers or "
                                f"strings), or bin a regression target into classes")
    alike = alike_labels(classes)
    if alike:
        shown = listed_groups(alike)
        warnings.warn(f"{what}: classes that differ only in case or spaces ({shown}) are "
                      f"different classes; if they are one, write them alike "
                      f"(e.g. y.str.strip().str.lower())", DENInputWarning, stacklevel=3)
    one_number = numeric_alike_labels(classes)
    if one_number:
        warnings.warn(f"{what}: texts that read as one number ({listed_groups(one_number)}) are "
                      f"read as written, different classes; if they are one class, write them "
                      f"alike", DENInputWarning, stacklevel=3)
    return codes.astype(np.int32), classes


def _refuse_unscorable_labels(arr: np.ndarray, what: str) -> None:
    """Refuse labels that fit but that scikit-learn's scores cannot read (``score``,
    ``cross_val_score`` and a grid search would give NaN for every candidate): bytes, and
    numbers or booleans held as Python objects (an object column of ints, IntEnum members).

    Raises:
        DENInputError: naming the labels' kind and the conversion to make.
    """
    if arr.dtype.kind == "S" or (arr.dtype == object and len(arr) and isinstance(arr[0], bytes)
                                 and all(isinstance(v, bytes) for v in arr)):
        raise DENInputError(f"Unknown label type: {what} are bytes, which scikit-learn's scores "
                            f"cannot read; decode them to text first (e.g. [v.decode() for v in y])")
    if arr.dtype != object or not len(arr) or any(isinstance(v, (str, bytes)) for v in arr):
        return  # texts (mixed with other types: refused where they are sorted)
    import numbers

    if all(isinstance(v, (bool, np.bool_)) for v in arr):
        kind, fix = "booleans", "y.astype(bool)"
    elif all(isinstance(v, (numbers.Integral, np.integer)) for v in arr):
        kind, fix = "integers", "y.astype(int)"
    elif all(isinstance(v, (numbers.Real, np.floating)) for v in arr):
        kind, fix = "numbers", "y.astype(float)"
    else:
        return  # e.g. dates or Enum members: sorted (or refused) below
    raise DENInputError(f"Unknown label type: {what} are {kind} held as Python objects (dtype "
                        f"object), which scikit-learn's scores cannot read (score and "
                        f"cross_val_score would give NaN); convert them first: {fix}")


def numeric_alike_labels(labels) -> list[list[str]]:
    """The groups (two or more each) of text ``labels`` that read as one number ("01" and "1",
    "1.0" and "1"), each in the order given: kept as that many classes, as written."""
    groups: dict[float, list[str]] = {}
    for label in labels:
        if isinstance(label, str):
            with contextlib.suppress(ValueError):
                groups.setdefault(float(label), []).append(str(label))
    return [group for group in groups.values() if len(group) > 1]


def alike_labels(labels) -> list[list[str]]:
    """The groups (two or more each) of text ``labels`` that differ only in case or surrounding
    spaces ("pos", "Pos", "pos "), each in the order given: read as that many classes."""
    groups: dict[str, list[str]] = {}
    for label in labels:
        if isinstance(label, str):
            groups.setdefault(label.strip().lower(), []).append(str(label))  # np.str_ as text
    return [group for group in groups.values() if len(group) > 1]


def listed_groups(groups: list[list[str]]) -> str:
    """``alike_labels``' groups as a message shows them: "'Pos', 'pos'; 'No', 'no'"."""
    return "; ".join(", ".join(map(repr, group)) for group in groups)


# The separators a CSV file may use; the first lines decide (``_separator``).
_SEPARATORS = (",", ";", "\t", "|")
# Compressed files, known by their first bytes (pandas would go by the file name's extension).
_MAGIC = {b"\x1f\x8b": "gzip", b"PK\x03\x04": "zip", b"PK\x05\x06": "zip", b"\xfd7zXZ\x00": "xz",
          b"BZh": "bz2"}  # PK 05 06: an empty zip archive
_HEAD_BYTES = 1 << 20  # what separator detection and the header check read
# A number written with a decimal comma (12,5), as Excel writes ';' files in such locales.
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")
# Numbers as spreadsheets write them with thousands grouped: where the comma is the decimal
# mark (1.234,50; 2.500; 12,5; ';' files) and where the point is (1,234.50; 1,234,567; ','
# files, where such a cell is quoted). A group never starts with 0 (0,125 is a decimal).
_WHOLE_GROUPED_BY = r"[+-]?(?:[1-9][0-9]{{0,2}}(?:{mark}[0-9]{{3}})+|[0-9]+)"  # 2.500, 800
# Whole numbers with thousands grouped by points (2.500) or not grouped (800).
_GROUPED_THOUSANDS = re.compile(_WHOLE_GROUPED_BY.format(mark=r"\."))
_GROUPED_DECIMAL_COMMA = re.compile(_WHOLE_GROUPED_BY.format(mark=r"\.") + r"(?:,[0-9]+)?")
_GROUPED_DECIMAL_POINT = re.compile(_WHOLE_GROUPED_BY.format(mark=",") + r"(?:\.[0-9]+)?")
# A column's number format (``read_table``): (its pattern, thousands mark, decimal mark).
NUMBER_FORMATS = {"decimal_comma": (_GROUPED_DECIMAL_COMMA, ".", ","),
                  "grouped_point": (_GROUPED_DECIMAL_POINT, ",", ".")}
# The separator of the files that write each number format (``_own_formats``).
_FORMAT_SEPARATOR = {"decimal_comma": ";", "grouped_point": ","}


def read_table(path, what: str = "table", like: pd.DataFrame | None = None,
               target: str | None = None, written: bool | list[str] = False, sep: str | None = None,
               na_values: list[str] | None = None):
    """Read a CSV file, with an error that names the file when it cannot be read.

    The file is read once, so a pipe works (``<(command)``), and may be gzip-, zip-, xz- or
    bzip2-compressed. The separator is one of ",", ";", tab and "|" (``_separator``); with
    ";", a column of numbers with decimal commas (12,5) is read as numbers, and so are numbers
    with thousands grouped (``_number_formats``); lines ending in the separator add no column.
    ``like``: the support table this file is the query of; its columns' number formats and its
    blank columns are read alike here. The text is UTF-8 (a byte-order mark is skipped), each
    byte that is not read as Windows-1252, else Latin-1, which reads any byte: so a file
    of one encoding reads whole, and one that mixes UTF-8 and Windows-1252 lines (appended
    exports) reads each line right; UTF-16 with its byte-order mark (Excel's "Unicode text")
    is read too. A column name that occurs twice is an error (pandas would rename the second
    "name.1", and a message would name a column the user never wrote); in a query (``like``),
    only where the support has that column or ``written`` names it, and the second such column
    is dropped. ``target``: the label column, whose labels are checked against their text as
    written (``_label_texts``). ``written``: return (table, the same columns as the file writes
    them, every cell text and an empty cell ""), e.g. to copy an id column 00017 unchanged; a
    list of column names: only those, in that order (a text copy of every column of a large
    file takes several times its size). ``sep``: the separator, where the file's is not to be
    found from its lines; ``na_values``: further texts that mean a missing value.
    """
    where = f"{what} file {str(path)!r}"
    try:
        with open(path, "rb") as handle:
            data = _utf8(_decompress(handle.read(), str(path)))
        # a one-column query shows no separator of its own: it is its support's (0,5 in a ';' file)
        alone = "," if like is None else like.attrs.get("separator", ",")
        sep, index_col, records = _layout(data, sep, alone)
        frame = _parse(data, sep, index_col, na_values=na_values)
    except FileNotFoundError as err:
        raise DENInputError(f"{where} does not exist") from err
    except (pd.errors.ParserError, pd.errors.EmptyDataError, OSError, EOFError, ValueError) as err:
        raise DENInputError(f"{where} is not a readable CSV file: {err}") from err
    names = [name for name in (records[0] if records else []) if name]  # blanks: "Unnamed: j"
    if like is None or written is True:
        _check_unique(names, where)
    else:  # a query: only the columns it is read for must be named once
        used = {str(c) for c in like.columns} | set(written or [])
        renamed = [str(c) for c in frame.columns
                   if str(c) not in names and not str(c).startswith("Unnamed: ")]
        _check_unique([c for c in names if c in used] +
                      [c.rsplit(".", 1)[0] for c in renamed if c in used], where)
        frame = frame.drop(columns=renamed)  # pandas' "note.1" for a second "note"
    frame = _drop_trailing_blank_columns(frame, set() if like is None else set(like.columns))
    def reread(usecols, **options):  # columns of this file as text
        return _parse(data, sep, index_col, dtype=str, usecols=usecols, **options)

    frame = _number_formats(frame, reread, sep, where, like)
    frame = _text_markers_kept(frame, reread, names, target, na_values)
    frame.attrs["separator"] = sep
    if like is not None and (blanks := _blank_lines_between_rows(data, len(frame))):
        warnings.warn(f"{where}: {blanks} blank line(s) between its rows are skipped, so the "
                      f"output has a row for each of its {len(frame)} other rows, in order, not one "
                      f"for each line", DENInputWarning, stacklevel=2)
    # the labels' text is needed where reading lost some: labels read as numbers or as missing
    if target is not None and target in frame.columns and \
            (frame[target].dtype.kind in "fiu" or frame[target].isna().any()):
        frame[target] = _label_texts(frame[target], reread([target], keep_default_na=False)[target],
                                     f"{where} column {target!r}")
    if written:
        columns = list(frame.columns) if written is True else list(written)
        lacking = [c for c in columns if c not in frame.columns]
        if lacking:
            raise DENInputError(f"{where} has no column(s) {lacking}"
                                f"{meant_columns(lacking, frame.columns)}; its columns are "
                                f"{[str(c) for c in frame.columns]}")
        return frame, reread(None if written is True else columns, keep_default_na=False)[columns]
    return frame


def read_table_head(path, what: str = "table", sep: str | None = None, rows: int = 1) -> pd.DataFrame:
    """The first ``rows`` rows of a CSV file as ``read_table`` reads it (compression, text
    encoding, separator; ``sep`` as there), from the file's first bytes alone: what planning
    checks of a large file (its header, a row) without reading it whole.

    Raises:
        DENInputError: the file does not exist or is not a readable CSV file.
    """
    import bz2
    import gzip
    import lzma
    import zipfile
    import zlib

    where = f"{what} file {str(path)!r}"
    try:
        with open(path, "rb") as handle:
            magic = handle.read(8)
        method = next((m for start, m in _MAGIC.items() if magic.startswith(start)), None)
        if method == "zip" or magic.startswith(b"\xd0\xcf\x11\xe0"):  # an archive or a workbook
            with open(path, "rb") as handle:
                data = _decompress(handle.read(), str(path))[:_HEAD_BYTES]
        else:
            opener = {"gzip": gzip.open, "xz": lzma.open}.get(method) or \
                (bz2.open if method == "bz2" and str(path).lower().endswith(".bz2") else open)
            with opener(path, "rb") as handle:
                data = handle.read(_HEAD_BYTES)
        if len(data) == _HEAD_BYTES and b"\n" in data:
            data = data[:data.rindex(b"\n") + 1]  # whole lines only
        data = _utf8(data)
        sep, index_col, _ = _layout(data, sep)
        return _parse(data, sep, index_col, nrows=rows)
    except FileNotFoundError as err:
        raise DENInputError(f"{where} does not exist") from err
    except (pd.errors.ParserError, pd.errors.EmptyDataError, OSError, EOFError, ValueError,
            lzma.LZMAError, zipfile.BadZipFile, zlib.error) as err:
        raise DENInputError(f"{where} is not a readable CSV file: {err}") from err


def _label_texts(labels: pd.Series, texts: pd.Series, where: str) -> pd.Series:
    """The label column as its file writes it, where reading it as numbers or missing values
    would lose classes: ``labels`` as read (n,), ``texts`` (n,) the same cells as written.

    - Texts that read as one number ('01' and '1', '1' and '1.0') stay the texts, different
      classes, as DENClassifier keeps them (``encode_labels`` warns of them; read as numbers, a
      zip code 01 would silently join class 1).
    - Labels each written one way, but not as the number would be written back ('007', '+1'),
      stay the texts too, so that predictions name the classes as the file does (007, not 7).

    Raises:
        DENInputError: a label that pandas reads as missing ('NA', 'None', 'null', ...) names
            that text (a row without a label is an error; 'NA' may be a class, e.g. North
            America, and the message says how to keep it).
    """
    written = texts.astype(str).str.strip()
    missing = labels.isna().to_numpy() & ~written.isin(MISSING_LABELS).to_numpy()
    if missing.any():
        shown = sorted(set(written[missing]))
        raise DENInputError(f"{where}: {int(missing.sum())} row(s) have the label "
                            f"{', '.join(map(repr, shown[:5]))}, which reads as no label: drop those "
                            f"rows, as a row without a label cannot be learnt from; or, if it is a "
                            f"class, write it otherwise (e.g. 'N.A.' for 'NA')")
    given = labels.notna().to_numpy()
    if labels.dtype.kind not in "fiu" or (labels[given] != np.floor(labels[given])).any():
        return labels  # text already, or continuous values (an error, as numbers, in encode_labels)
    per_number = pd.Series(written[given].to_numpy()).groupby(labels[given].to_numpy()).unique()
    if not any(len(t) > 1 for t in per_number):  # each number written one way: kept as numbers
        # where written back so (7, not 007); else the texts, which encode_labels warns of
        as_number = str if labels.dtype.kind in "iu" else (lambda v: str(float(v)))
        if all(texts[0] == as_number(number) for number, texts in per_number.items()):
            return labels
    return pd.Series(np.where(given, written.to_numpy(), None), index=labels.index, dtype=object,
                     name=labels.name)


def _text_markers_kept(frame: pd.DataFrame, reread, names: list[str], target: str | None,
                       na_values: list[str] | None) -> pd.DataFrame:
    """``frame`` with the texts pandas reads as missing by default ("NA", "None", "null",
    "N/A", ...) given back as written in its columns of text: there they may be categories
    (a severity of "None", the region "NA"), and a table given to ``DENClassifier`` keeps them so
    (``TabularEncoder`` reads them as missing in columns of numbers or dates only). Empty cells
    and ``na_values`` stay missing; the label column (``target``) has its own reading."""
    columns = [c for c in frame.columns
               if c != target and c in names and frame[c].isna().any()
               and pd.api.types.infer_dtype(frame[c], skipna=True) == "string"]
    if columns:
        written = reread(columns, keep_default_na=False, na_values=[""] + list(na_values or []))
        for column in columns:
            frame[column] = written[column].to_numpy()
    return frame


def _drop_trailing_blank_columns(frame: pd.DataFrame, keep: set) -> pd.DataFrame:
    """``frame`` without its last columns that have neither a name nor a value (lines ending in
    the separator, as some spreadsheets write them), except those named in ``keep`` (the
    support table's columns, when reading a query)."""
    end = frame.shape[1]
    while end and str(frame.columns[end - 1]).startswith("Unnamed: ") and \
            frame.columns[end - 1] not in keep and not frame.iloc[:, end - 1].notna().any():
        end -= 1
    return frame.iloc[:, :end] if end < frame.shape[1] else frame


def _number_texts(column) -> tuple[np.ndarray, pd.Series]:
    """(given (n,) bool: a value that is no missing marker, texts: those values' stripped texts
    with positions 0..n-1 as index) of a column."""
    values = _without_markers(pd.Series(np.asarray(column, dtype=object)))
    given = values.notna().to_numpy()
    return given, values[given].astype(str).str.strip()


def _read_format(column, name: str) -> np.ndarray | None:
    """(n,) float64 of a column in number format ``name`` (``NUMBER_FORMATS``; markers and
    empty cells NaN), or None where a given value does not match it."""
    pattern, group, decimal = NUMBER_FORMATS[name]
    given, texts = _number_texts(column)
    if not texts.str.fullmatch(pattern).all():
        return None
    numbers = texts.str.replace(group, "", regex=False).str.replace(decimal, ".", regex=False)
    out = np.full(len(given), np.nan)
    try:
        out[given] = np.asarray(pd.to_numeric(numbers, errors="coerce"), dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    return out


def _number_formats(frame: pd.DataFrame, reread, sep: str, where: str,
                    like: pd.DataFrame | None) -> pd.DataFrame:
    """``frame`` with the columns that spreadsheets' number formats wrote as text read as
    numbers; ``frame.attrs["number_formats"]`` says which, by column name. ``reread(usecols=...)``
    reads columns of the same file as text.

    A table alone (``like`` None) decides them from its own columns (``_own_formats``). A query
    table (``like``: its support table) is read in the support's formats, so that the same text
    is the same number in both tables; a column the support read as plain numbers takes the
    query's own format only where that reads the support's numbers alike: thousands grouped by
    commas in a ',' file (1.5 reads 1.5 either way), or any format where the support column
    holds whole numbers only. A query of the other separator keeps the support's format only
    where it fits: a ',' query's numbers have decimal points (the support's decimal commas read
    only its quoted text, "5,666"), and a ';' query takes its own formats.
    """
    if like is None:
        decided = _own_formats(frame, reread, sep, where)
    else:
        given = like.attrs.get("number_formats", {})
        # a ',' query was written with decimal points: the support's decimal commas apply only to
        # its quoted text ("5,666"), not to numbers pandas read (5.648 is no thousands group)
        same_writer = like.attrs.get("separator") == sep
        decided = {column: fmt for column, fmt in given.items() if column in frame.columns and
                   (same_writer or _FORMAT_SEPARATOR[fmt] == sep or
                    (sep == "," and not pd.api.types.is_numeric_dtype(frame[column])))}
        for column, fmt in _own_formats(frame, reread, sep, where, infer=False).items():
            if column in decided:
                continue
            if column not in like.columns or sep == "," or not same_writer or \
                    pd.api.types.is_integer_dtype(like[column]):  # another writer: its own formats
                decided[column] = fmt
    numeric = [c for c in decided if not pd.api.types.is_object_dtype(frame[c])]
    raw = reread(usecols=numeric) if numeric else {}  # pandas read 2.500 as 2.5: its text is needed
    for column, fmt in decided.items():
        values = _read_format(raw[column] if column in numeric else frame[column], fmt)
        if values is not None:
            frame[column] = values
    frame.attrs["number_formats"] = decided
    return frame


def _own_formats(frame: pd.DataFrame, reread, sep: str, where: str, infer: bool = True) -> dict[str, str]:
    """The number formats a table's own columns show (``NUMBER_FORMATS``), by column name:
    - a ';' file: a text column of numbers with a decimal comma (12,5) or thousands grouped by
      points (1.234,50; 1.234.567), at least one of them, is "decimal_comma"; with ``infer``,
      so is a column pandas read as numbers whose points all group thousands (2.500, 800) where
      another column has decimal commas (a point there is no decimal mark), with a warning
      naming it; where no column has them, such a column mixing 2.500 and 800 stays as pandas
      read it (2.5), with a warning that its points may group thousands;
    - a ',' file: a text column of numbers with thousands grouped by commas and a decimal point
      (1,234.50) or two or more groups (1,234,567), quoted, is "grouped_point" (1,234 alone is
      left as text: a decimal comma would read so too);
    - a tab or '|' file, where either convention may write numbers: "decimal_comma" where a
      cell can only be a decimal comma (2816,12; 0,666; 1.234,5), "grouped_point" where one can
      only group thousands by commas (1,234.5; 1,234,567); 1,234 alone is left as text.
    """
    names = {";": ("decimal_comma",), ",": ("grouped_point",)}.get(sep, ("decimal_comma", "grouped_point"))
    decided = {}
    for column in frame.columns:
        if _is_numeric(frame[column]) or pd.api.types.is_bool_dtype(frame[column]):
            continue
        if not frame[column].dropna().astype(str).str.contains(",", regex=False).any() and \
                (sep == "," or not frame[column].dropna().astype(str).str.contains(".", regex=False).any()):
            continue  # no cell could show the format: an ordinary text column, at vectorised cost
        texts = _number_texts(frame[column])[1]
        for name in names if len(texts) else ():
            if texts.str.fullmatch(NUMBER_FORMATS[name][0]).all() and _shows_format(texts, name, sep):
                decided[column] = name
                break
    if infer and sep == ";":
        floats = [c for c in frame.columns if c not in decided and pd.api.types.is_float_dtype(frame[c])]
        raw = reread(usecols=floats) if floats else {}
        for column in floats:
            texts = _number_texts(raw[column])[1]
            grouped = texts.str.contains(".", regex=False)
            if not grouped.any() or not texts.str.fullmatch(_GROUPED_THOUSANDS).all():
                continue
            example = texts[grouped].iloc[0]
            if decided:  # points grouping thousands beside decimal commas elsewhere
                decided[column] = "decimal_comma"
                warnings.warn(f"{where} column {column!r}: {example!r} is read as "
                              f"{float(example.replace('.', '')):g}, its point a thousands separator, "
                              f"as other columns write decimal commas; if it is a decimal point, "
                              f"write the number with a comma ({example.replace('.', ',')})",
                              DENInputWarning, stacklevel=5)
            elif not grouped.all():  # 2.816 beside 528: a ';' file's point may group thousands
                whole = texts[~grouped].iloc[0]
                warnings.warn(f"{where} column {column!r}: {example!r} is read as {float(example):g} "
                              f"beside whole numbers such as {whole!r}; if its point groups thousands "
                              f"({example.replace('.', '')}), as in a ';' file it may, write the "
                              f"numbers without it", DENInputWarning, stacklevel=5)
    return decided


def _shows_format(texts: pd.Series, name: str, sep: str) -> bool:
    """Whether number texts that match format ``name``'s pattern show that format, in a file of
    separator ``sep`` (``_own_formats``): a cell the plain reading would not read so."""
    comma, points = texts.str.contains(",", regex=False), texts.str.count(r"\.")
    if name == "grouped_point":
        return bool(((comma & (points > 0)) | (texts.str.count(",") > 1)).any())
    if sep == ";":
        return bool((comma | (points > 1)).any())
    # a tab or '|' file: 1,234 could group thousands; 12,5, 0,666, 2816,125 and 1.234,5 cannot
    decimal = texts.str.contains(r"(?:,\d{1,2}|,\d{4,})$") | texts.str.match(r"[+-]?0,") | \
        (comma & (points > 0)) | (points > 1)
    return bool(decimal.any())


def _utf8(data: bytes) -> bytes:
    """A CSV file's bytes as UTF-8 in Unicode's composed form (NFC), what ``read_table`` parses:
    UTF-16 with its byte-order mark (Excel's "Unicode text") decoded; any other text read as
    UTF-8, each byte that is not read as Windows-1252, else Latin-1 (``_legacy_bytes``); accents
    composed, so that "café" written as "cafe" and a combining accent (as macOS exports it) is
    the support's "café", not an unseen category, and a header "Größe" so written names the
    same column. Pure ASCII is returned as it is."""
    import unicodedata

    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        text = data.decode("utf-16", errors="replace")
    elif data.isascii():
        return data
    else:
        text = data.decode("utf-8-sig", errors=_LEGACY_BYTES)
    return unicodedata.normalize("NFC", text).encode("utf-8")


def _layout(data: bytes, sep: str | None, alone: str = ",") -> tuple[str, bool | None, list[list[str]]]:
    """(separator, pandas' ``index_col``, the first 50 records) of a CSV file's UTF-8 ``data``
    (``_utf8``), from its first lines: ``sep`` where given, else ``_separator`` (``alone`` for a
    file of one column); ``index_col`` False where data lines end in the separator under a
    header that does not (pandas would take the first column for row names and shift every
    other one left)."""
    head = data[:_HEAD_BYTES].decode("utf-8-sig", errors="replace")  # a cut character at the end
    sep = sep or _separator(head, alone)
    records = _records(head, sep, 50)
    return sep, (False if _trailing_separator(records) else None), records


# A line of spaces and tabs only (pandas skips it), counted at the line break that ends it.
_BLANK_LINE = re.compile(rb"\n[ \t\r]*(?=\n)")
_LAST_TEXT = re.compile(rb"\S\s*\Z")


def _blank_lines_between_rows(data: bytes, rows: int) -> int:
    """The blank lines that pandas skipped between the rows of a CSV file's UTF-8 ``data``
    (those after its last row do not count): 0 unless the file's other lines are its header
    and exactly ``rows`` rows, so that a line break in a quoted cell never miscounts."""
    last = _LAST_TEXT.search(data)
    if last is None:
        return 0
    end = last.start() + 1
    blanks = sum(1 for _ in _BLANK_LINE.finditer(data, 0, end))
    return blanks if blanks and data.count(b"\n", 0, end) - blanks == rows else 0


def _parse(data: bytes, sep: str, index_col: bool | None, **options) -> pd.DataFrame:
    """pandas' reading of a CSV file's UTF-8 ``data`` with the layout ``_layout`` found: the
    fast C parser for a one-character separator, the Python one for a longer separator or a
    regular expression ('\\s+', '::' in UCI files); ``options`` go to ``pd.read_csv``."""
    import io

    return pd.read_csv(io.BytesIO(data), sep=sep, encoding="utf-8-sig", index_col=index_col,
                       engine=None if len(sep) == 1 else "python", **options)


def _legacy_bytes(error: UnicodeDecodeError) -> tuple[str, int]:
    """Decoding error handler: bytes that are not UTF-8 read as Windows-1252, else Latin-1."""
    chunk = error.object[error.start:error.end]
    try:
        return chunk.decode("cp1252"), error.end
    except UnicodeDecodeError:
        return chunk.decode("latin-1"), error.end


_LEGACY_BYTES = "den-legacy-bytes"  # ``read_table``'s handler of bytes that are not UTF-8
codecs.register_error(_LEGACY_BYTES, _legacy_bytes)


def _decompress(data: bytes, name: str) -> bytes:
    """``data`` uncompressed where its first bytes say it is compressed (bzip2 only with a
    .bz2 name: "BZh" may begin a header); a zip file must hold one file."""
    import bz2
    import gzip
    import io
    import lzma
    import zipfile
    import zlib

    if data.startswith(b"\xd0\xcf\x11\xe0"):  # an OLE2 compound file: Excel 97-2003 (.xls)
        raise ValueError("it is an Excel workbook (.xls), not a CSV file; save the sheet as CSV "
                         "(File > Save As > CSV UTF-8)")
    method = next((m for magic, m in _MAGIC.items() if data.startswith(magic)), None)
    try:
        if method == "gzip":
            return gzip.decompress(data)
        if method == "xz":
            return lzma.decompress(data)
        if method == "bz2" and name.lower().endswith(".bz2"):
            return bz2.decompress(data)
        if method == "zip":
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                names = archive.namelist()
                if "[Content_Types].xml" in names:  # an Office document
                    raise ValueError("it is an Excel workbook (or another Office document), not a CSV "
                                     "file; save the sheet as CSV (File > Save As > CSV UTF-8)")
                if len(names) != 1:
                    raise ValueError(f"a zip file must hold one CSV file, this one holds {len(names)}")
                return archive.read(names[0])
    except (OSError, EOFError, lzma.LZMAError, zlib.error, zipfile.BadZipFile) as err:
        raise ValueError(f"it looks {method}-compressed but cannot be decompressed ({err})") from None
    return data


def _records(text: str, sep: str, count: int) -> list[list[str]]:
    """The first ``count`` records of CSV ``text`` split by ``sep`` (quotes respected; a
    longer separator or a regular expression splits each line as pandas' Python parser does)."""
    import csv
    import io
    import itertools

    if len(sep) != 1:
        return [re.split(sep, line.strip()) for line in text.splitlines()[:count]]
    try:
        return list(itertools.islice(csv.reader(io.StringIO(text), delimiter=sep), count))
    except csv.Error:
        return []


def _trailing_separator(records: list[list[str]]) -> bool:
    """Whether every data record has one field more than the header (``records[0]``), an empty
    one at the end: lines ending in the separator under a header that does not."""
    return len(records) > 1 and all(len(row) == len(records[0]) + 1 and not row[-1].strip()
                                    for row in records[1:])


def _separator(head: str, alone: str = ",") -> str:
    """The separator of the CSV file that begins with ``head``: of ``_SEPARATORS``, the one that
    splits the header into the most fields, where the first data rows (if any) have as many, or
    fewer but at least two (a row may leave out its trailing empty fields, "1;2;yes" under
    "x1;x2;label;note"; a column named "a|b" over rows "1", "2" stays one column);
    between two that split them alike, the one that leaves fewer cells holding another
    separator (a decimal comma, 12,5, not counted): "Preis (EUR, netto);Menge" over "12,5;3" is
    a ';' file. ``alone`` where none splits the header (a file of one column)."""
    best, score = alone, (1, 0)
    for sep in _SEPARATORS:
        records = _records(head, sep, 6)
        if not records or (any(len(row) != len(records[0]) and not 2 <= len(row) < len(records[0])
                               for row in records[1:]) and not _trailing_separator(records)):
            continue
        others = sum(any(s in cell for s in _SEPARATORS if s != sep)
                     and not _DECIMAL_COMMA.fullmatch(cell.strip())
                     for row in records for cell in row)
        candidate = (len(records[0]), -others)
        if len(records[0]) > 1 and candidate > score:
            best, score = sep, candidate
    return best


def row_number_columns(features: pd.DataFrame, min_rows: int = 10) -> list[tuple[str, int, int]]:
    """The columns of ``features`` (n, d) that number its rows: whole numbers, none missing,
    rising by exactly 1 from each row to the next (0..n-1 of a saved pandas index, which reads
    back as "Unnamed: 0"; a running id 1001, 1002, ...), in a table of at least ``min_rows``
    rows (in fewer, a true feature could rise so by chance).

    Returns:
        [(column name, first value, last value)], in column order.
    """
    if len(features) < min_rows:
        return []
    found = []
    for name in features.columns:
        values = features[name]
        if values.dtype.kind not in "iuf" or values.isna().any():
            continue
        values = values.to_numpy(dtype=float)
        if (values == np.floor(values)).all() and (np.diff(values) == 1).all():
            found.append((str(name), int(values[0]), int(values[-1])))
    return found


def meant_columns(lacking, columns) -> str:
    """The hint for column names a table lacks, " (did you mean 'Age'?)": for each lacking
    name, the one column that differs from it only in case or spaces, else the closest
    spelling (``difflib``, ratio >= 0.8: 'colour' for 'color', never 'x2' for 'x1'); "" where
    no column is near. ``lacking``: the names asked for (strings); ``columns``: the table's."""
    import difflib

    names = [str(c) for c in columns]
    pairs = []
    for name in map(str, lacking):
        alike = [c for c in names if c.strip().lower() == name.strip().lower()]
        alike = alike if len(alike) == 1 else difflib.get_close_matches(name, names, n=1, cutoff=0.8)
        if alike:
            pairs.append((name, alike[0]))
    if not pairs:
        return ""
    if len(pairs) == 1 and len(lacking) == 1:
        return f" (did you mean {pairs[0][1]!r}?)"
    shown = ", ".join(f"{meant!r} for {name!r}" for name, meant in pairs)
    return f" (did you mean {shown}?)"


def split_target(frame: pd.DataFrame, target: str, where: str) -> tuple[pd.DataFrame, pd.Series]:
    """(features, labels) of a table with a ``target`` column; the error lists the columns, and
    names the one meant (``meant_columns``)."""
    if target not in frame.columns:
        meant = meant_columns([target], frame.columns)
        raise DENInputError(f"{where} has no column {target!r}{meant}; its columns are "
                            f"{[str(c) for c in frame.columns]}")
    return frame.drop(columns=[target]), frame[target]


def task_from_frame(frame: pd.DataFrame, target: str, name: str, where: str | None = None):
    """A ``Task`` from a table: features encoded by ``TabularEncoder``, labels to 0..L-1.

    Args:
        where: how errors name the table (default: "task 'name'"), e.g. its file.
    """
    from den.data.tasks import Task

    where = where or f"task {name!r}"
    features, labels = split_target(frame, target, where)
    codes, classes = encode_labels(labels, f"{where} column {target!r}")
    x = TabularEncoder().fit_transform(features, f"{where} features")
    return Task(name=name, x=x, y=codes, feature_names=[str(c) for c in features.columns],
                classes=classes.tolist())
