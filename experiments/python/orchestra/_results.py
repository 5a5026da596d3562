"""orchestra.run and orchestra.read_results: `orchestra run` from a notebook, and its results as
pandas DataFrames (the CSV files) and dicts (the JSON files)."""
import csv
import json
import os

from . import _core
from ._checks import checked_int


def run(config, out=None, seed=None, seeds=None, threads=None, quiet=False, overwrite=False):
    """Runs an experiment as `orchestra run CONFIG --out OUT --seed SEED` does, with the same files
    (README, "Running experiments"), and returns read_results(OUT).

    out      the results folder (default results/<name>/, relative to the current directory)
    seed     overrides the config's seed; seeds=[1, 2, 3] runs every seed into OUT/seed-<N>/ as
             `--seeds` does (one after another: `--jobs` has no equivalent here)
    threads  libtorch's and OpenBLAS's threads (default: the config's runtime.threads)
    quiet    no progress on stderr
    overwrite  OUT holds other results (another experiment's, other seeds'): remove exactly those,
             as `--overwrite` does; without it such a folder, or one another run is writing, is
             refused before anything runs (orchestra.Error, kind "results folder")

    A bad config raises orchestra.ConfigError (a ValueError) naming file:line: key, before
    anything is written. The call releases the GIL while the experiment runs, and leaves torch's
    default generator as it found it (the experiment seeds it, as `orchestra run` does). One run
    at a time in a process: a second, from another thread, raises RuntimeError at once (both
    would seed that one generator); run several in processes.
    """
    if seed is not None:
        seed = checked_int(seed, "run: seed", 0, 2**63)
    if seeds is not None:
        seeds = [checked_int(s, "run: every seed", 0, 2**63) for s in seeds]
    if threads is not None:
        threads = checked_int(threads, "run: threads", 1, 257)
    out_dir = _core.run(os.fspath(config), os.fspath(out) if out is not None else "", seed, seeds, threads, quiet, bool(overwrite))
    return read_results(out_dir)


class Results:
    """The results of a folder of `orchestra run`: one experiment's (results/quickstart), one
    policy's, or several runs' (a multi-seed run's seed-<N>/ folders).

    epochs, evals      DataFrames of every policy's epochs.csv and evals.csv, with a `policy`
                       column (the policy's label) first, and `run` (the run's folder name, such
                       as seed-3) before it when the folder holds several runs
    rounds, iterations the same for rounds.csv and iterations.csv, read when first used
    summary            a DataFrame of summary.json's numbers and strings, one row per policy;
                       its policy column is the label, as in the tables above
    summaries, configs summary.json and config.json as dicts, keyed by the policy's label
                       ("run/label" when the folder holds several runs)
    comparison         the folder's comparison.md (the table `orchestra run` prints), or None
    train              train.csv of an A3C training in the folder, as a DataFrame, or None
    runs, policies     the runs' names, and the policies' labels in the order they ran
    """

    def __init__(self, dir):
        self.dir = os.fspath(dir)
        pandas = _pandas()
        index = _core.results_index(self.dir)
        several = len(index) > 1
        self.runs = [run["name"] for run in index]
        self.policies = []
        self.summaries, self.configs = {}, {}
        self._files = []  # (run name, label, policy folder, rounds.csv, iterations.csv)
        for run in index:
            for policy in run["policies"]:
                key = f"{run['name']}/{policy['label']}" if several else policy["label"]
                if policy["label"] not in self.policies:
                    self.policies.append(policy["label"])
                self.summaries[key] = _read_json(os.path.join(policy["dir"], "summary.json"))
                config = os.path.join(policy["dir"], "config.json")
                self.configs[key] = _read_json(config) if os.path.isfile(config) else None
                self._files.append((run["name"], policy["label"], policy["dir"], policy["rounds_csv"], policy["iterations_csv"]))
        self._several = several
        self.epochs = self._table(lambda f: os.path.join(f[2], "epochs.csv"))
        self.evals = self._table(lambda f: os.path.join(f[2], "evals.csv"))
        rows = []
        for (run_name, label, _, _, _), summary in zip(self._files, self.summaries.values()):
            row = {"run": run_name} if several else {}
            row["policy"] = label
            # summary.json's own `policy` (the registry name, fixed-t for a sweep point) would
            # replace the label; it stays in summaries
            row.update({k: v for k, v in summary.items() if k != "policy" and (v is None or isinstance(v, (str, int, float, bool)))})
            rows.append(row)
        self.summary = pandas.DataFrame(rows)
        comparison = os.path.join(self.dir, "comparison.md")
        self.comparison = _read_text(comparison) if os.path.isfile(comparison) else None
        train = next((run["train_csv"] for run in index if run["train_csv"]), "")
        self.train = _read_csv(train) if train else None
        self._rounds = self._iterations = None

    @property
    def rounds(self):
        if self._rounds is None:
            self._rounds = self._table(lambda f: f[3])
        return self._rounds

    @property
    def iterations(self):
        if self._iterations is None:
            self._iterations = self._table(lambda f: f[4])
        return self._iterations

    def _table(self, path_of):
        """Every policy's CSV file (where it has one), concatenated with its run and label first."""
        pandas = _pandas()
        frames = []
        for files in self._files:
            path = path_of(files)
            if not path or not os.path.isfile(path):
                continue
            frame = _read_csv(path)
            frame.insert(0, "policy", files[1])
            if self._several:
                frame.insert(0, "run", files[0])
            frames.append(frame)
        return pandas.concat(frames, ignore_index=True) if frames else pandas.DataFrame()

    def __repr__(self):
        return f"<orchestra.Results {self.dir}: {len(self.runs)} run(s), policies {', '.join(self.policies)}>"


def read_results(dir):
    """The results in `dir` (see Results). A folder that does not exist, holds no results or a
    malformed file raises orchestra.DataError naming it."""
    return Results(dir)


def _read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise _core.DataError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def _read_json(path):
    text = _read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise _core.DataError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None


def _read_csv(path):
    """A results CSV as a DataFrame, every row checked to have the header's number of cells first:
    pandas would take a row with more for one with an index column, without a word."""
    pandas = _pandas()
    with open(path, encoding="utf-8", newline="") as f:
        try:
            rows = csv.reader(f)
            header = next(rows, None)
            if not header:
                raise _core.DataError(f"{path}: empty, not even a header line")
            for row in rows:
                if row and len(row) != len(header):
                    raise _core.DataError(f"{path}:{rows.line_num}: {len(row)} cells, the header has {len(header)}")
        except UnicodeDecodeError as e:
            raise _core.DataError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
        except csv.Error as e:
            raise _core.DataError(f"{path}: not a readable CSV file ({e})") from None
    return pandas.read_csv(path)


def _pandas():
    try:
        import pandas
    except ImportError as e:
        raise ImportError("orchestra.read_results needs pandas (Debian: apt-get install python3-pandas)") from e
    return pandas
