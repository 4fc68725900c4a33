"""The committed sample datasets, and a generator for large ones.

`python -m coordinator_kit datasets` writes one folder per named, seeded scenario into
`datasets/`: a log file per broker and per consumer in Kafka's log4j layout, the JSONL trace and
the `__consumer_offsets` records as a CSV table, plus the README that describes them. Everything
is a view of the scenario's trace on virtual time, so regenerating gives the same bytes and
`--check` can tell when a change in behaviour moved a committed file.

`--large SIZE` replays rendered lines of seeded scenario variants for many groups at once, to
give Spark gigabytes that still read like a coordinator's logs.
"""

from .catalog import DATASETS, RECORDED, DatasetSpec, many_groups
from .large import LargeResult, generate_large, parse_size
from .offsets_table import OFFSETS_COLUMNS, offsets_rows
from .writer import check, compare_dirs, render_dataset, render_all, write_all

__all__ = ["DATASETS", "RECORDED", "DatasetSpec", "many_groups", "OFFSETS_COLUMNS", "offsets_rows",
           "render_dataset", "render_all", "write_all", "check", "compare_dirs",
           "generate_large", "parse_size", "LargeResult"]
