"""Shared pytest configuration for the kit's tests.

The session-scoped Spark fixture (local[1], UTC, UI off, one shuffle partition) will live
here. Keep this module free of pyspark imports at import time: the pure-Python model tests
must run without a JVM; import pyspark inside the fixture instead.
"""
